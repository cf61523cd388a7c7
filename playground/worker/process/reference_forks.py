"""The run's reference processes, from the template's side: forked before the run's child
gets its request, killed and their folder removed when the run ends. What each one does is
run/compare/reference.py's `run_side`; why they exist, and why the template forks them, that module
says. Worker-side.
"""

from __future__ import annotations

import contextlib
import faulthandler
import json
import os
import select
import shutil
import signal
import tempfile
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from playground.worker import compat
from playground.worker.process import limits, procs
from playground.worker.process.child import Inherited, said_why
from playground.worker.process.findings_lane import fork_lane
from playground.worker.process.readback import read_regular
from playground.worker.process.witness import Witness
from playground.worker.run import ranks
from playground.worker.run.compare.reference import (
    GO,
    NO_PROCESS,
    STARTED_FILE,
    FileSink,
    SideResult,
    first_to_start,
    run_side,
    send_go,
)
from playground.worker.run.programs import program_reference
from playground.worker.run.spine.request import PENDING, PIDS_FILE, ReferenceProcesses, WorkerRequest


class Forked:
    """The two reference processes of one run, forked by the template before it hands the run
    to its child, or (`later`) just after: killed and their folder removed when the run ends."""

    def __init__(
        self, inherited: Inherited, request: WorkerRequest, *, lane: bool = False, later: bool = False
    ) -> None:
        self.folder = tempfile.mkdtemp(prefix="compile-playground-ref-")
        self.pids: list[int] = []
        self.lane = lane
        self.unsigned = request
        self.info = ReferenceProcesses(
            self.folder, PENDING, PENDING if request.rank is None else NO_PROCESS, PENDING if lane else NO_PROCESS
        )
        if not later:
            self.fork(lambda: inherited)

    def fork(self, inherited_now: Callable[[], Inherited]) -> None:
        """Fork them now, and write their pids where a run handed its request before them reads
        them (ReferenceProcesses.resolved). Forked after the handover, the run's child loads
        the snippet while the template forks (two forks of the template: about 20 ms that the
        save waited for), and the eager reference still loads only after the child has."""
        inherited = inherited_now()  # the template's descriptors as they are now, to be closed
        eager = wide = findings = NO_PROCESS
        # Blocked from before the fork: a GO that arrives before the child waits is kept for it.
        old = signal.pthread_sigmask(signal.SIG_BLOCK, {GO})
        try:
            # The findings lane (findings_lane.py), when the run has one: forked first, as it
            # starts first (the save's first findings wait for it), and it starts the eager one
            # when its findings are sent, reading its pid from the folder.
            if self.lane:
                findings = fork_lane(inherited, self.unsigned, self.folder)
                self.pids.append(findings)
            eager = self._fork(inherited, self.unsigned, "eager")
            # Across ranks there is none: it would run on one rank's demand only, and a collective
            # of the snippet's would wait for the other ranks' (reference.NO_PROCESS).
            if self.unsigned.rank is None:
                wide = self._fork(inherited, self.unsigned, "float64")
        except OSError:  # a fork refused (no memory, no pids): the run goes on and says so
            pass
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)
            self.info = ReferenceProcesses(self.folder, eager, wide, findings)
            # Whatever was forked, the run reads it (a fork that failed is a reference that
            # never ran, which the run reports), never waits for it.
            part = os.path.join(self.folder, PIDS_FILE + ".part")
            with contextlib.suppress(OSError), open(part, "w", encoding="utf-8") as fh:
                json.dump({"eager": eager, "float64": wide, "findings": findings}, fh)
            with contextlib.suppress(OSError):
                os.rename(part, os.path.join(self.folder, PIDS_FILE))
            # The run's child marks that it has loaded the snippet before it reads the pids: if
            # it did so before they were written, it went on to its calls without them, and
            # the GO it would have sent is sent here (References.start).
            if os.path.lexists(os.path.join(self.folder, STARTED_FILE)):
                send_go(first_to_start(self.info))

    def _fork(self, inherited: Inherited, request: WorkerRequest, side: str) -> int:
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the reference process
            _reference_process(inherited, request, parent, side, os.path.join(self.folder, side))
        self.pids.append(pid)
        return pid

    def request(self, request: WorkerRequest) -> WorkerRequest:
        """`request` for the run's child: its references named in it."""
        return replace(request, references=self.info)

    def eager_failure(self, wait_s: float) -> dict[str, Any] | None:
        """After the run's child died: how the eager reference ended, waited for up to `wait_s`,
        when it raised in a call ({"failed_call": N, "error": {...}}), else None. A compiled
        call that crashes the process (an Inductor kernel's bounds check aborts) on a call where
        eager raised is the snippet's error, not torch.compile's nor ours."""
        pid = self.info.eager
        if not os.path.lexists(os.path.join(self.folder, STARTED_FILE)):
            # The child died before it started its references (before the snippet had loaded,
            # or a program before its comparison): no eager reference is on its way, and
            # waiting for one only delayed the report (a killed program's `check` took 34 s,
            # 30 of them here).
            return None
        if self.info.findings != NO_PROCESS:
            # Its GO was the findings lane's to send once its findings were out; the lane may
            # have died on the same call, or still be tracing: the eager one is due now. (A
            # second GO is one it has already taken: it is blocked, never delivered.)
            send_go(pid)
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:
            pidfd = None
        if pidfd is not None:
            try:
                select.select([pidfd], [], [], max(wait_s, 0.0))
            finally:
                os.close(pidfd)
        # Read as anything the snippet could have put there: never a FIFO or a link, bounded.
        data = read_regular(os.path.join(self.folder, "eager.end.json"), 1 << 20)
        try:
            ended = json.loads(data) if data is not None else None
        except ValueError:
            return None
        if (
            isinstance(ended, dict)
            and isinstance(ended.get("failed_call"), int)
            and isinstance(ended.get("error"), dict)
        ):
            return ended
        return None

    def close(self) -> None:
        procs.kill_all(self.pids)
        for pid in self.pids:  # killed: each ends at once, and is reaped, never left a zombie
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, 0)
        self.pids = []
        shutil.rmtree(self.folder, ignore_errors=True)


def _reference_process(inherited: Inherited, request: WorkerRequest, parent: int, side: str, path: str) -> None:
    """A reference process from the fork to os._exit: it never speaks on the channel."""
    code = 0
    try:
        procs.forked_from(parent)
        for fd in {inherited.channel.out_fd, *inherited.template_fds}:
            with contextlib.suppress(OSError):
                os.close(fd)
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)  # the snippet's output is the compiled run's to report
        os.close(devnull)
        limits.set_threads()  # the same share of the cores as the compiled run
        signal.sigwait({GO})  # eager: once the run has loaded the snippet; float64: when asked
        limits.cap_memory()  # the host's cap holds for every copy of the snippet

        timeout = request.run.flags.timeout_s
        if timeout:
            # A snippet that hangs in eager hangs here too, and the run's child may be stuck in
            # Dynamo's trace of it: this stack, dumped before the timeout, names the snippet's
            # line when the child's does not (the client reads the newest dump that names one).
            faulthandler.dump_traceback_later(max(timeout - 0.75, 0.5), exit=False, file=inherited.crash_log)
        compat.clear_run_state()
        # The snippet runs here too: if it kills the worker, the client hears why (witness.py).
        witness = Witness(request.id, request.run.path, parent)
        witness.install()
        with open(path + ".part", "wb") as fh:
            sink = FileSink(fh, path)
            place = request.rank
            if place is not None and side == "eager":
                # The eager references of every rank join a group of their own: the snippet's
                # collectives pair them with each other, never with a compiled run.
                ranks.join(
                    place,
                    port=place.reference_port,
                    device=request.run.settings.device,
                    make_group=request.run.program is None,
                    side="reference",
                )
                ranks.say_joined()
            if request.run.program is None:
                run_side(request, side, sink, emit=witness.sent)
            elif side == "eager":
                # The program again, eagerly, as far as the compiled run's plan says.
                program_reference.run_reference(request, sink, path + ".plan")
            else:
                sink.end(SideResult(complete=True, note="a program has no float64 reference"))
        os.rename(path + ".part", path)
    except BaseException as exc:  # noqa: BLE001 - nothing may escape into the template's code
        code = 70
        said_why(inherited)
        _said_to_the_run(path, exc)
    finally:
        # Across ranks, no reference ends while another still makes its pairs with it.
        with contextlib.suppress(BaseException):
            ranks.wait_until_all_joined()
        os._exit(code)


def _said_to_the_run(path: str, exc: BaseException) -> None:
    """Why this reference failed in our own code, one line beside its result (`.failed`): the
    run's note says it instead of "killed or crashed"."""
    with contextlib.suppress(BaseException), open(path + ".failed", "w", encoding="utf-8") as fh:
        fh.write(f"{type(exc).__name__}: {exc}"[:500])
