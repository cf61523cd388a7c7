"""`watch --present DIR` with a real worker: every complete run lands in the session folder with
the text that ran, and stopping `watch` tells the followers the session ended."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from playground.engine.session import SessionReader

ROOT = Path(__file__).resolve().parents[2]
SNIPPET = """
import torch

SETTINGS = {{"backend": "eager"}}

def fn(x):
    return torch.sin(x) * {n}

def inputs():
    return [(torch.ones(4),)]
"""


def test_watch_publishes_each_run_and_says_when_it_stops(tmp_path: Path):
    snippet, session = tmp_path / "demo.py", tmp_path / "session"
    snippet.write_text(SNIPPET.format(n=1))
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    argv = [sys.executable, "-m", "playground", "watch", str(snippet), "--json-lines", "--no-timing"]
    proc = subprocess.Popen(
        [*argv, "--present", str(session)], cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    reader = SessionReader(session)
    runs = []

    def wait_runs(count: int) -> None:
        deadline = time.monotonic() + 120
        while len(runs) < count and time.monotonic() < deadline:
            news = reader.poll()
            if news is not None:
                runs.extend(news.runs)
            time.sleep(0.1)
        assert len(runs) >= count, proc.poll()

    try:
        wait_runs(1)
        assert runs[0].source == SNIPPET.format(n=1) and runs[0].report.error is None
        assert runs[0].snippet_name == "demo.py" and runs[0].settings.backend == "eager"
        assert reader.presenter.live and reader.presenter.hello.torch_version
        tmp = snippet.with_suffix(".tmp")
        tmp.write_text(SNIPPET.format(n=2))
        os.replace(tmp, snippet)
        wait_runs(2)
        assert runs[1].source == SNIPPET.format(n=2)
        assert runs[1].report.content_sha256 != runs[0].report.content_sha256
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM
    state = json.loads((session / "presenter.json").read_text())
    assert state["live"] is False and state["ended_at"]
