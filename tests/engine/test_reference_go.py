"""The run's GO to its references never waits for the template's forks: the run's child marks
that it has loaded the snippet and sends GO only if their pids are written; the template, once
it has written them, sends GO itself if the mark is there. Both sides through real processes
(a child blocked on GO, as a reference is), without a worker."""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path
from types import SimpleNamespace

from playground.worker.run.compare.reference import GO, NO_PROCESS, STARTED_FILE, References, first_to_start
from playground.worker.run.spine.request import PENDING, PIDS_FILE, ReferenceProcesses


def _waiting_for_go() -> int:
    """A forked process that exits 0 once it has GO, as a reference process waits for it."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {GO})
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the stand-in reference
        signal.sigwait({GO})
        os._exit(0)
    signal.pthread_sigmask(signal.SIG_SETMASK, old)
    return pid


def _got_go(pid: int, timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status) == 0
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return False


def _references(folder: Path) -> References:
    pending = ReferenceProcesses(str(folder), PENDING, PENDING, NO_PROCESS)
    return References(SimpleNamespace(request=SimpleNamespace(references=pending)))  # type: ignore[arg-type]


def test_pids_read_now_or_not_yet(tmp_path: Path) -> None:
    pending = ReferenceProcesses(str(tmp_path), PENDING, PENDING, PENDING)
    assert pending.resolved_now() is None
    (tmp_path / PIDS_FILE).write_text(json.dumps({"eager": 11, "float64": 12, "findings": -1}))
    assert pending.resolved_now() == ReferenceProcesses(str(tmp_path), 11, 12, NO_PROCESS)
    (tmp_path / PIDS_FILE).write_text("{not json")
    assert pending.resolved_now() == ReferenceProcesses(str(tmp_path), -1, -1, -1)


def test_the_child_goes_on_without_the_pids_and_marks_it(tmp_path: Path) -> None:
    references = _references(tmp_path)
    started = time.monotonic()
    references.start()
    # No pids yet: the child marks and goes on (it used to wait for them, up to 30 s).
    assert time.monotonic() - started < 1.0
    assert (tmp_path / STARTED_FILE).exists()
    assert references._info is not None and references._info.pending


def test_the_child_sends_go_when_the_pids_are_there(tmp_path: Path) -> None:
    pid = _waiting_for_go()
    (tmp_path / PIDS_FILE).write_text(json.dumps({"eager": pid, "float64": -1, "findings": -1}))
    _references(tmp_path).start()
    assert _got_go(pid)


def test_the_template_sends_go_when_the_child_marked_first(tmp_path: Path) -> None:
    """What process/reference_forks.Forked.fork does once the pids are written."""
    from playground.worker.process.reference_forks import Forked

    forked = Forked.__new__(Forked)
    forked.folder = str(tmp_path)
    forked.lane = False
    forked.pids = []
    forked.unsigned = SimpleNamespace(rank=None)
    _references(tmp_path).start()  # the child first: no pids, a mark
    lane = _waiting_for_go()
    forked._fork = lambda inherited, request, side: lane if side == "eager" else NO_PROCESS  # type: ignore[method-assign]
    forked.fork(lambda: None)  # type: ignore[arg-type, return-value]
    assert json.loads((tmp_path / PIDS_FILE).read_text())["eager"] == lane
    assert first_to_start(forked.info) == lane
    assert _got_go(lane)
