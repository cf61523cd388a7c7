"""Blame with a cause: a run whose snippet closes the descriptors it inherited (daemon-style
`os.closerange(3, 1024)`) or kills the worker's process had read as "worker error: WorkerDied:
the run's process exited with code 70 while loading the snippet": the tool blamed, the wrong
phase, no line. The run's child leaves its last words first; the report says what the snippet
did, as the snippet's error, in the phase it was in, with the line when it is known. Real
workers, backend eager."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from playground.engine.last_words import error
from tests.watching import WatchProcess

BODY = """\
import os
import signal

import torch

SETTINGS = {{"backend": "eager"}}


def fn(x):
    {in_fn}
    return x.sin()


def inputs():
    {in_inputs}
    return [(torch.ones(4),)]
"""

CLOSES = "os.closerange(3, 1024)"
KILLS_PARENT = "os.kill(os.getppid(), signal.SIGKILL)"
KILLS_GROUP = "os.killpg(os.getpgid(0), signal.SIGKILL)"


def snippet(in_inputs: str = "pass", in_fn: str = "pass") -> str:
    return BODY.format(in_inputs=in_inputs, in_fn=in_fn)


def line_of(text: str, code: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if code in line)


def check(path: Path) -> tuple[dict, subprocess.CompletedProcess[str]]:
    result = subprocess.run(
        [sys.executable, "-m", "playground", "check", str(path), "--json", "--no-timing"],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )
    return json.loads(result.stdout), result


@pytest.mark.parametrize(
    ("code", "kind", "words"),
    [
        (KILLS_PARENT, "KilledWorker", "killed the worker's process (its parent) with os.kill("),
        (KILLS_GROUP, "KilledWorker", "killed the worker's process group with os.killpg("),
        (CLOSES, "ClosedDescriptor", "closed the descriptor the run reports on"),
    ],
    ids=["kills-parent", "kills-group", "closes-descriptors"],
)
def test_check_blames_the_snippet_with_its_cause_when_inputs_takes_the_runs_voice(
    tmp_path: Path, code: str, kind: str, words: str
):
    text = snippet(in_inputs=code)
    path = tmp_path / "snip.py"
    path.write_text(text)
    report, result = check(path)
    err = report["error"]
    assert err["kind"] == "snippet" and err["type"] == kind, err
    assert words in err["message"], err["message"]
    assert "loading the snippet" not in err["message"]
    assert "inputs()" in err["message"]
    if kind == "KilledWorker":
        assert err["line"] == line_of(text, code)
        assert f"at line {err['line']}" in err["message"]
    assert result.returncode == 2
    assert "worker error" not in result.stderr and "snippet error" in result.stderr


def test_a_kill_in_the_compiled_call_names_the_function_and_the_phase(tmp_path: Path):
    text = snippet(in_fn="if not torch.compiler.is_compiling(): os.kill(os.getppid(), signal.SIGKILL)")
    path = tmp_path / "snip.py"
    path.write_text(text)
    report, _ = check(path)
    err = report["error"]
    assert (err["kind"], err["type"]) == ("snippet", "KilledWorker"), err
    assert "killed the worker's process (its parent)" in err["message"] and "in fn() at line" in err["message"]
    assert "while eager call 1" in err["message"], err["message"]


def test_watch_says_so_then_runs_the_next_save_on_a_fresh_worker(tmp_path: Path):
    path = tmp_path / "snip.py"
    bad = snippet(in_inputs=KILLS_PARENT)
    path.write_text(bad)
    watch = WatchProcess(path)
    try:
        first = watch.wait_complete(hashlib.sha256(bad.encode()).hexdigest())
        assert (first["error"]["kind"], first["error"]["type"]) == ("snippet", "KilledWorker")
        good = snippet()
        path.write_text(good)
        second = watch.wait_complete(hashlib.sha256(good.encode()).hexdigest())
        assert second["error"] is None and second["worker_restarted"]
    finally:
        watch.close()


def test_words_it_cannot_read_are_not_an_error():
    assert error({"cause": "something new"}) is None
    closed = error({"cause": "closed", "fd": 4, "doing": "compiling call 2", "failed": "sending the diagnostics"})
    assert closed is not None and "after “compiling call 2” and before “sending the diagnostics”" in closed.message
