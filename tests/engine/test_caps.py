"""Every text that comes from the snippet or torch has a stated limit, and a cut says so with
"… N more bytes": a 10 MB line printed inside `fn` (a graph break) had made `check --json` print
20 MB (the break's detail and torch's graph_breaks log each held it whole), and an exception
message is the snippet's to fill too. Real workers, backend eager."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from playground.engine.caps import DEFAULT_LIMIT, LIMITS, cap, cap_all
from tests.watching import WatchProcess

HUGE = 10_000_000

PRINTS = f"""\
import sys
import torch

SETTINGS = {{"backend": "eager"}}


def fn(x):
    sys.stdout.write("x" * {HUGE} + "\\n")
    return x.sin()


def inputs():
    return [(torch.randn(4),)]
"""

RAISES = f"""\
import torch


def fn(x):
    return x.sin()


def inputs():
    raise ValueError("e" * {HUGE})
"""

MARKER = re.compile(r"… (\d+) more bytes$")


def _bytes(text: str) -> int:
    return len(text.encode())


def test_cap_keeps_its_limit_and_says_how_much_it_cut():
    text = "é" * 100_000  # two bytes each: the cut never splits a character
    capped = cap(text, 4096)
    assert _bytes(capped) <= 4096
    more = int(MARKER.search(capped).group(1))
    assert _bytes(capped.rsplit(" … ", 1)[0]) + more == _bytes(text)
    assert cap(capped, 4096) == capped  # capping twice changes nothing
    assert cap("short", 4096) == "short"


def test_cap_all_uses_each_keys_limit_and_leaves_the_trace_whole():
    long = "y" * 1_000_000
    message = {
        "report": {"logs": {"guards": long}, "guards": [{"guards": [long]}], "error": {"message": long}},
        "trace": {"lines": [long]},
    }
    capped = cap_all(message)
    assert _bytes(capped["report"]["logs"]["guards"]) <= LIMITS["guards"]
    assert _bytes(capped["report"]["guards"][0]["guards"][0]) <= DEFAULT_LIMIT
    assert _bytes(capped["report"]["error"]["message"]) <= LIMITS["message"]
    assert capped["trace"]["lines"][0] == long
    assert message["report"]["logs"]["guards"] == long  # the original is not changed


def test_check_json_caps_a_huge_line_printed_inside_fn_and_a_huge_exception(tmp_path: Path):
    prints = tmp_path / "prints.py"
    prints.write_text(PRINTS)
    raises = tmp_path / "raises.py"
    raises.write_text(RAISES)
    result = subprocess.run(
        [sys.executable, "-m", "playground", "check", str(prints), str(raises), "--json", "--no-timing"],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert len(result.stdout) < 1_000_000, len(result.stdout)
    first, second = (json.loads(line) for line in result.stdout.splitlines())
    assert first["graph_break_count"] >= 1
    detail = first["graph_breaks"][0]["detail"]
    assert _bytes(detail) <= LIMITS["detail"] and MARKER.search(detail), detail[-80:]
    log = first["logs"]["graph_breaks"]
    assert _bytes(log) <= LIMITS["graph_breaks"] and MARKER.search(log), log[-80:]
    assert int(MARKER.search(log).group(1)) > HUGE - LIMITS["graph_breaks"]
    assert second["error"]["kind"] == "snippet"
    for report in (first, second):
        assert cap_all(report) == report  # every string within its key's limit already
    # The text report, too, prints what the JSON holds.
    text = subprocess.run(
        [sys.executable, "-m", "playground", "check", str(prints), "--no-timing"],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    assert len(text.stdout) + len(text.stderr) < 1_000_000


def test_watch_json_lines_cap_a_huge_line_printed_inside_fn(tmp_path: Path):
    prints = tmp_path / "prints.py"
    prints.write_text(PRINTS)
    watch = WatchProcess(prints)
    try:
        import hashlib

        done = watch.wait_complete(hashlib.sha256(PRINTS.encode()).hexdigest())
        for line in watch.lines:
            assert len(json.dumps(line)) < 1_000_000
        assert MARKER.search(done["logs"]["graph_breaks"])
    finally:
        watch.close()
