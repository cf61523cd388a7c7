"""Inductor's one-time start-up in the worker, for a program: a run does not wait for it unless
it will use Inductor, and a session's template is warmed after a program's run instead, so
that the next save does not wait for it either. Real workers."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path

import pytest

from playground.engine.events import ProgressEvent
from playground.engine.program import ProgramOptions
from playground.engine.settings import Settings
from playground.engine.sync import SyncWorker
from tests.requests import request_for

pytestmark = pytest.mark.torch

PROGRAM = """\
import torch

f = torch.compile(lambda x: x + 1, backend="eager")
print(f(torch.ones(2)).sum().item())
"""

SNIPPET = """\
import torch


def fn(x):
    return x * 2


def inputs():
    return [(torch.ones(4),)]
"""


def _progress(worker: SyncWorker, request) -> list[str]:
    said: list[str] = []

    def on_event(event: object) -> None:
        if isinstance(event, ProgressEvent):
            said.append(event.message)

    result = worker.run(request, on_event)
    assert result.report.error is None, result.report.error
    return said


def _settled(pid: int, timeout_s: float = 120.0) -> None:
    """Wait until the template has forked its next spare and gone quiet: after a run it sweeps,
    imports, warms, then forks the spare; a request sent before that is queued, and warms
    first, which is not what the test asks."""
    deadline = time.monotonic() + timeout_s
    last, quiet_since = None, time.monotonic()
    while time.monotonic() < deadline:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        cpu = int(fields[11]) + int(fields[12])
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        if cpu != last:
            last, quiet_since = cpu, time.monotonic()
        elif children and time.monotonic() - quiet_since > 2.0:
            return
        time.sleep(0.2)
    raise AssertionError("the template never settled")


def test_a_backend_eager_program_does_not_wait_for_inductor_and_the_next_run_finds_it_warm(tmp_path: Path) -> None:
    prog = tmp_path / "prog.py"
    prog.write_text(PROGRAM)
    snip = tmp_path / "snip.py"
    snip.write_text(SNIPPET)
    with SyncWorker(timeout_s=300) as worker:
        pid = worker.start().pid
        request = request_for(prog, Settings(), timing=False)  # the session's default backend: inductor
        request = replace(request, program=ProgramOptions().run_for(PROGRAM, ()))
        assert not any("starting Inductor" in m for m in _progress(worker, request))
        _settled(pid)
        # Warmed after the program's run: the snippet's Inductor run does not start it again.
        said = _progress(worker, request_for(snip, Settings(backend="inductor"), timing=False))
        assert not any("starting Inductor" in m for m in said), said


def test_a_program_run_under_a_backend_the_user_set_to_inductor_warms_first(tmp_path: Path) -> None:
    prog = tmp_path / "prog.py"
    prog.write_text(PROGRAM)
    with SyncWorker(timeout_s=300) as worker:
        worker.start()
        request = request_for(prog, Settings(backend="inductor"), timing=False)
        request = replace(request, program=ProgramOptions().run_for(PROGRAM, ("backend",)))
        assert any("starting Inductor" in m for m in _progress(worker, request))
