"""The findings lane's process, from the template's side: forked beside the run's child (with
the run's references, reference_forks.py), it waits until the run's child has loaded the
snippet, as the eager reference does, makes the run's calls with backend "eager"
(run/findings_lane.py) and sends Dynamo's findings on the channel as one "findings" message
(playground/engine/events.py `FindingsEvent`), while the run's slow backend still compiles.
The snippet's output goes nowhere (it is the run's to report). Killed with the references when
the run ends. Worker-side.
"""

from __future__ import annotations

import contextlib
import os
import signal

from playground.engine.events import FindingsEvent
from playground.engine.lines import sanitize
from playground.worker.process import limits, procs
from playground.worker.process.child import Inherited, said_why
from playground.worker.process.output import OutputCapture
from playground.worker.process.witness import Witness
from playground.worker.run.compare.reference import GO
from playground.worker.run.spine import malloc
from playground.worker.run.spine.request import PENDING, ReferenceProcesses, WorkerRequest


def fork_lane(inherited: Inherited, request: WorkerRequest, folder: str) -> int:
    """The lane's pid; GO must be blocked in the caller (it is kept for the lane until it waits).
    `folder` is the run's references' (reference_forks.py), where the lane reads the eager
    reference's pid, which it starts when it is done."""
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the lane's process
        _lane_process(inherited, request, parent, folder)
    return pid


def _lane_process(inherited: Inherited, request: WorkerRequest, parent: int, folder: str) -> None:
    """The lane from the fork to os._exit: one message on the channel, at most."""
    code = 0
    waited = False
    try:
        procs.forked_from(parent)
        # A session of its own: where the kernel schedules by session (autogroup, Linux's
        # default on desktops), the lane then gets a share of its own instead of a slice of the
        # worker's, which the run's child and Inductor's compilers are using up.
        with contextlib.suppress(OSError):
            os.setsid()
        for fd in inherited.template_fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        malloc.keep_freed_memory()  # as a run's child: it lives for one run
        counts = limits.set_lane_threads()
        signal.sigwait({GO})  # the run's child has loaded the snippet
        waited = True
        limits.cap_memory()
        from playground.worker.run.findings_lane import findings

        witness = Witness(request.id, request.run.path, parent)
        witness.install()
        with OutputCapture():  # what the snippet prints is the run's to report, not the lane's
            report = findings(inherited.capturer, request, counts)
        if report is not None:
            inherited.channel.send(sanitize(FindingsEvent(report, run_id=request.id).to_dict()))
    except BaseException:  # noqa: BLE001 - nothing may escape into the template's code
        code = 70
        said_why(inherited)
    finally:
        # The eager reference starts once the findings are sent (or the lane failed), not
        # beside the lane: on two cores the run's child, its reference and the lane made three
        # processes tracing at once, and the findings waited for the reference's share. The
        # run's child still starts the reference itself when it needs it first.
        if waited:
            with contextlib.suppress(BaseException):
                eager = ReferenceProcesses(folder, PENDING, PENDING, PENDING).resolved(timeout_s=5.0).eager
                if eager > 0:
                    os.kill(eager, GO)
        os._exit(code)
