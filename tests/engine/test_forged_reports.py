"""Only the worker speaks on the worker's channel: a snippet that writes report lines on every
descriptor it inherited (the worker's pipe to the client among them) had its forged report
believed: `check` printed torch 9.9.9, breaks 0, exit 0, for a snippet with a real `print()`
break. Every message about a run now carries the run's key, a secret the client makes per run;
a line without it is ignored, and the report says there was one. Real workers, backend eager."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

from tests.watching import WatchProcess

FORGING = """\
import json
import os

import torch

SETTINGS = {"backend": "eager"}

FORGED = {"torch_version": "9.9.9", "graph_count": 1, "graph_breaks": [], "graph_break_count": 0,
          "recompiles": [], "recompile_count": 0, "recompile_limit_hit": False, "guards": [],
          "error": None, "equivalence": {"ok": True, "outputs": [], "grads": []}, "timings": None,
          "logs": {}}


def forge():
    # Every id a run could have, every event that carries a report, every descriptor.
    lines = b"".join(
        (json.dumps({"event": event, "id": run_id, "report": FORGED, "key": "guess"}) + "\\n").encode()
        for run_id in range(8)
        for event in ("diagnostics", "report")
    )
    for fd in range(3, 1024):
        try:
            os.write(fd, b"\\n" + lines)
        except OSError:
            pass


def fn(x):
    forge()  # in the calls, in eager and compiled alike
    y = torch.sin(x)
    print("a real graph break")
    return y.cos()


def inputs():
    forge()
    return [(torch.ones(4),)]
"""


def _honest(report: dict) -> None:
    assert report["torch_version"] != "9.9.9"
    assert report["graph_break_count"] >= 1, report["graph_breaks"]
    line = FORGING.splitlines().index('    print("a real graph break")') + 1
    assert line in [site["line"] for site in report["graph_breaks"]], report["graph_breaks"]
    assert any("did not come from the worker" in note for note in report["notes"]), report["notes"]


def test_check_never_believes_a_report_the_snippet_wrote(tmp_path: Path):
    path = tmp_path / "forging.py"
    path.write_text(FORGING)
    result = subprocess.run(
        [sys.executable, "-m", "playground", "check", str(path), "--json", "--no-timing"],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    report = json.loads(result.stdout)
    _honest(report)
    assert report["content_sha256"] == hashlib.sha256(FORGING.encode()).hexdigest()
    assert result.returncode == 0, result.stderr


def test_watch_never_believes_a_report_the_snippet_wrote(tmp_path: Path):
    path = tmp_path / "forging.py"
    path.write_text(FORGING)
    watch = WatchProcess(path)
    try:
        done = watch.wait_complete(hashlib.sha256(FORGING.encode()).hexdigest())
        _honest(done)
        for line in watch.lines:
            assert line["torch_version"] != "9.9.9", line
    finally:
        watch.close()


JUNK = FORGING.replace('os.write(fd, b"\\n" + lines)', 'os.write(fd, b\'{"event": "report", "id": 1, "unfinished\')')


def test_a_partial_line_left_on_the_channel_cannot_swallow_a_message(tmp_path: Path):
    """The compiled call leaves half a line on every descriptor, just before the worker sends
    the diagnostics: each message starts on a line of its own, so it still arrives."""
    path = tmp_path / "junk.py"
    path.write_text(JUNK)
    assert "unfinished" in JUNK
    watch = WatchProcess(path)
    try:
        digest = hashlib.sha256(JUNK.encode()).hexdigest()
        done = watch.wait_complete(digest)
        assert done["error"] is None and done["graph_break_count"] >= 1, done["error"]
        stages = [line["stage"] for line in watch.lines if line.get("content_sha256") == digest]
        assert stages == ["diagnostics", "complete"], stages
    finally:
        watch.close()
