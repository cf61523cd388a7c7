"""Client behaviour around runs: cancelling a stale run, one template forking every run."""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor

import pytest

from playground.engine.client import RunCancelled
from playground.engine.events import ProgressEvent, RunResult
from playground.engine.settings import Settings
from playground.engine.sync import SyncWorker
from tests.requests import request_for

SLOW = """
import time
import torch

def fn(x):
    return x + 1

def inputs():
    for i in range(50):
        time.sleep(0.1)
        yield torch.ones(2) * i
"""


def _in_background(worker: SyncWorker, path: str) -> Future[RunResult]:
    """A run started from another thread, so this one can cancel it while it runs."""
    pool = ThreadPoolExecutor(max_workers=1)
    future = pool.submit(worker.run, request_for(path, Settings(backend="eager"), timing=False))
    pool.shutdown(wait=False)
    return future


def test_cancel_stops_a_run_at_its_next_checkpoint(worker, snippet):
    path = snippet(SLOW)
    pid = worker.client.hello.pid
    future = _in_background(worker, path)
    time.sleep(1.0)
    started = time.monotonic()
    worker.cancel()
    with pytest.raises(RunCancelled):
        future.result(10)
    assert time.monotonic() - started < 3
    assert worker.client.hello.pid == pid  # stopped cooperatively: no restart needed


def test_cancel_of_a_stuck_run_kills_its_child_and_keeps_the_worker(snippet):
    path = snippet("import torch\ndef fn(x):\n    return x\ndef inputs():\n    while True:\n        pass\n")
    with SyncWorker(timeout_s=60) as w:
        w.start()
        pid = w.client.hello.pid
        future = _in_background(w, path)
        time.sleep(1.0)
        started = time.monotonic()
        w.cancel()
        with pytest.raises(RunCancelled):
            future.result(10)
        assert time.monotonic() - started < 3
        good = w.run(
            request_for(
                snippet(
                    "import torch\ndef fn(x):\n    return x + 1\ndef inputs():\n    return [torch.ones(1)]\n", "g.py"
                ),
                Settings(backend="eager"),
                timing=False,
            )
        ).report
        assert good.error is None
        # The run's child was killed; the template that holds torch stayed.
        assert w.client.hello.pid == pid and good.worker_restarted is False


def test_every_run_is_a_fresh_child_of_one_template(snippet):
    path = snippet("import torch\ndef fn(x):\n    return x + 1\ndef inputs():\n    return [torch.ones(1)]\n")
    with SyncWorker() as w:
        hello = w.start()
        first = w.run(request_for(path, Settings(backend="eager"), timing=False)).report
        second = w.run(request_for(path, Settings(backend="eager"), timing=False)).report
        assert first.worker is not None and second.worker is not None
        assert first.worker.pid != second.worker.pid
        assert hello.pid not in (first.worker.pid, second.worker.pid)
        assert w.client.hello.pid == hello.pid and not second.worker_restarted


def test_a_snippet_that_cannot_parse_does_not_wait_for_inductors_warm_up(snippet):
    """Inductor's one-time warm-up (20-30 s with a cold cache) is for a run that can reach it: a
    file saved mid-edit fails at load and is reported at once; the first run that parses warms."""
    broken = snippet("import torch\ndef fn(x:\n    return x\n", "broken.py")
    with SyncWorker(timeout_s=60) as w:
        w.start()
        events = []
        report = w.run(request_for(broken, Settings(backend="inductor"), timing=False), events.append).report
        assert report.error is not None and report.error.kind == "snippet" and report.error.line == 2
        said = [e.message for e in events if isinstance(e, ProgressEvent)]
        assert said and not any("Inductor" in words for words in said), said
        good = snippet(
            "import torch\ndef fn(x):\n    return x + 1\ndef inputs():\n    return [torch.ones(1)]\n", "g.py"
        )
        assert w.run(request_for(good, Settings(backend="eager"), timing=False)).report.error is None


def _children(pid: int) -> set[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as fh:
        return {int(p) for p in fh.read().split()}


def _settle(pid: int, want_spare: bool, timeout: float = 10) -> set[int]:
    """The template's children once they match (one spare or none), or as they are at the end.
    (The report arrives before the template has reaped the run's child and killed its reference
    processes: they are waited out.)"""
    end = time.monotonic() + timeout
    while len(_children(pid)) != int(want_spare) and time.monotonic() < end:
        time.sleep(0.05)
    return _children(pid)


def test_the_last_run_leaves_no_spare_child_warming(worker, snippet):
    """A one-shot `check` says its run is the last: the template then forks no spare for a next
    run (which would warm itself for a second of CPU only to be killed at close)."""
    path = snippet("import torch\ndef fn(x):\n    return x + 1\ndef inputs():\n    return [torch.ones(1)]\n")
    template = worker.client.hello.pid
    assert worker.run(request_for(path, Settings(backend="eager"), timing=False, last=False)).report.error is None
    assert len(_settle(template, want_spare=True)) == 1  # the next run's child, warming ahead
    assert worker.run(request_for(path, Settings(backend="eager"), timing=False, last=True)).report.error is None
    assert _settle(template, want_spare=False) == set()
    assert worker.run(request_for(path, Settings(backend="eager"), timing=False)).report.error is None  # still serves


def test_a_program_without_a_timeout_gets_the_longer_one_and_a_given_one_holds():
    # `python PROG` has no timeout: a program's run gets 600 s (its own bound a third of it), a
    # snippet's 120 s; a timeout given to the client or the request holds for both.
    from dataclasses import replace

    from playground.engine.client import DEFAULT_TIMEOUT_S, PROGRAM_TIMEOUT_S, run_timeout
    from playground.engine.program import ProgramOptions

    text = "import torch\nf = torch.compile(lambda x: x)\n"
    snippet_run = request_for(__file__, Settings(backend="eager"), timing=False)
    program_run = replace(snippet_run, program=ProgramOptions().run_for(text, ()))
    assert run_timeout(snippet_run, None) == DEFAULT_TIMEOUT_S == 120
    assert run_timeout(program_run, None) == PROGRAM_TIMEOUT_S == 600
    assert run_timeout(program_run, 30.0) == run_timeout(snippet_run, 30.0) == 30.0
    asked = replace(program_run, flags=replace(program_run.flags, timeout_s=7.0))
    assert run_timeout(asked, 30.0) == 7.0


def test_the_template_is_never_signalled_through_popen(monkeypatch):
    """Popen's send_signal and kill poll first, and a poll that finds the template just exited
    reaps it ahead of asyncio's child watcher, which then writes "Unknown child process pid N"
    on the user's stderr: the channel signals through the template's pidfd instead."""
    import asyncio

    from playground.engine.channel import WorkerChannel

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("the template was signalled through Popen")

    for name in ("send_signal", "kill", "terminate"):
        monkeypatch.setattr(asyncio.subprocess.Process, name, refused)

    async def both() -> tuple[int | None, int | None]:
        killed = WorkerChannel()
        await killed.spawn()
        proc = killed.proc
        await killed.kill()  # alive: SIGKILL
        termed = WorkerChannel()
        await termed.spawn()
        termed.hello = None  # as one still starting: SIGTERM at once, then SIGKILL
        other = termed.proc
        await termed.shutdown()
        assert proc is not None and other is not None
        return proc.returncode, other.returncode

    killed_code, termed_code = asyncio.run(both())
    assert killed_code is not None and termed_code is not None
