"""A run's child: what a forked process does from the fork to os._exit - one run, its events
and report on the channel. Also the same run done in place (no isolation), and the code child
(dynamo_code/held_report.py). A child is handed `Inherited`, what it needs of the template, and
never the template itself. Worker-side."""

from __future__ import annotations

import contextlib
import faulthandler
import json
import os
import signal
import threading
import time
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TextIO

from playground.engine.events import Progress
from playground.engine.lines import encode, sanitize
from playground.engine.report import Report, RunError, WorkerInfo
from playground.worker.process import limits, memory, procs, warmup
from playground.worker.process.channel import Channel, ChannelLost
from playground.worker.process.output import OutputCapture
from playground.worker.process.readback import frame, send_back
from playground.worker.process.tracer_watch import TracerWatch
from playground.worker.process.witness import Witness
from playground.worker.run import ranks
from playground.worker.run.spine import malloc
from playground.worker.run.spine.request import RankPlace, WorkerRequest

if TYPE_CHECKING:
    from playground.worker.capture.records import Capturer


def dump_after(timeout: float) -> float:
    """Seconds into a run at which faulthandler's watchdog dumps its stack: half a second before
    the template's kill, so that a timeout says where the run was. The watchdog reads the frames
    of a thread that is still running, and now and then that faults: a loop that Dynamo traces
    until the timeout died of SIGSEGV in the dump once in 12 runs here. The template counts a
    fault after this point as the timeout it is (template._ended)."""
    return max(timeout - 0.5, 0.5)


@dataclass(frozen=True)
class Inherited:
    """What a child of the template needs from it, and nothing more."""

    #: The pipe to the client: a run's child speaks on it (a reference process closes it).
    channel: Channel
    #: Where faulthandler writes a hung or crashed process's stack (the real stderr).
    crash_log: TextIO
    #: The handlers on torch's loggers, installed once in the template.
    capturer: Capturer
    #: The template's own descriptors that a child must not hold open: the channel's read end
    #: (only the template reads requests) and the spare child's pipes.
    template_fds: tuple[int, ...]
    #: Whether Inductor has run in the template (its one-time start-up is then not in a compile).
    inductor_started: bool
    #: The write end of this process's own pipe back to the template (readback.py), where a
    #: held report goes (`WorkerRequest.held`, the code child's findings); -1 when it has none.
    report_fd: int = -1


def rss_mb() -> float:
    try:
        with open("/proc/self/statm") as fh:
            pages = int(fh.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def peak_rss_mb() -> float | None:
    """This process's resident high-water mark (VmHWM), in MiB."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024, 1)
    except (OSError, ValueError, IndexError):
        pass
    return None


def run_child(inherited: Inherited, request: WorkerRequest, parent: int) -> None:
    """The forked child: one run, its report on the channel, then os._exit (never returns)."""
    code = 0
    try:
        # A program's malloc is glibc's own, as under `python PROG` (its own timings would read
        # twice as fast with freed memory kept: nanoGPT's bench.py, 60 against 120 ms a step).
        _become_child(inherited, parent, tuned=request.run.program is None)
        run_here(inherited, request, limits.cap_memory(), parent)
    except BaseException:  # noqa: BLE001 - nothing may escape into the template's code
        code = 70
        said_why(inherited)
    finally:
        os._exit(code)


def spare_child(inherited: Inherited, read_fd: int, ready_fd: int, parent: int) -> None:
    """A child forked ahead of its run: it warms itself, then waits for its request."""
    code = 0
    try:
        _become_child(inherited, parent)
        if os.environ.get("COMPILE_PLAYGROUND_WARMUP", "1") != "0":
            from playground.worker import compat

            if warmup.spare_experiment_wanted():
                used = warmup.warm(inherited.capturer, "eager", inherited.inductor_started)
                inherited = replace(inherited, inductor_started=inherited.inductor_started or used)
            with OutputCapture():
                warmup.start_thread_pools()
            compat.clear_run_state()
        memory.prefault_heap()  # the run's first allocations then find their pages in place
        os.write(ready_fd, b"r")
        os.close(ready_fd)
        data = bytearray()
        while chunk := os.read(read_fd, 1 << 20):
            data += chunk
        if data:  # an empty pipe: the template dropped us unused
            request = WorkerRequest.from_message(json.loads(data))
            if not request.held:  # the report goes to the client; the snippet gets no report file
                os.close(inherited.report_fd)
                inherited = replace(inherited, report_fd=-1)
            run_here(inherited, request, limits.cap_memory(), parent)
    except BaseException:  # noqa: BLE001 - nothing may escape into the template's code
        code = 70
        said_why(inherited)
    finally:
        os._exit(code)


def code_child(inherited: Inherited, request: WorkerRequest, parent: int) -> None:
    """The code child: the request's calls again under depyf, what it decompiled written where
    the template reads it (dynamo_code/held_report.py), then os._exit (never returns)."""
    code = 0
    try:
        _become_child(inherited, parent)
        from playground.worker.dynamo_code.depyf_rerun import collect

        channel = inherited.channel
        request = channel.expect(request)
        run_id = request.id

        def emit(event: dict[str, Any]) -> None:
            progress = Progress.from_dict(event)
            if progress is not None:  # the run is past its calls: say whose these are
                words = f"depyf: {progress.message}"
                ours = replace(progress, phase="dynamo_code", message=words, tracing=None, run_id=run_id)
                channel.send(sanitize(ours.to_dict()))

        with OutputCapture():  # the snippet's output was the run's, already in its report
            result = collect(inherited.capturer, request, emit)
        send_back(inherited.report_fd, frame(0, encode(sanitize(result))))
    except BaseException:  # noqa: BLE001 - nothing may escape into the template's code
        code = 70
        said_why(inherited)
    finally:
        os._exit(code)


def said_why(inherited: Inherited) -> None:
    """A child that is ending with code 70 (an exception of ours escaped it): its traceback on
    the worker's stderr, whose tail the client keeps for the run's error, so that it is not a
    bare exit code. Written to the descriptor, not through the file object's buffer, which the
    fork copied from the template."""
    import traceback

    with contextlib.suppress(Exception):
        text = f"compile-playground worker: process {os.getpid()} failed in the playground's own code\n"
        os.write(inherited.crash_log.fileno(), (text + traceback.format_exc()).encode("utf-8", "replace"))


def _become_child(inherited: Inherited, parent: int, tuned: bool = True) -> None:
    """What every child does first: die with the template, default signals, no reading.
    `tuned`: malloc set for a process that lives for one run (malloc.py), not for a program."""
    procs.forked_from(parent)
    for fd in inherited.template_fds:
        os.close(fd)
    if tuned:
        malloc.keep_freed_memory()  # it lives for one run: freed memory is reused, not refaulted
    limits.set_threads()  # the host's share of the cores, before a warm-up starts the pools


def run_here(
    inherited: Inherited, request: WorkerRequest, memory_cap: int | None = None, parent: int | None = None
) -> bool:
    """One run where we are (a forked child of the template `parent`, or the template without
    isolation): its events and its report on the channel. `memory_cap` (MiB) is the cap
    `limits.cap_memory` set here: an allocation it refused is named so in the report. True
    when the run used Inductor (the template without isolation then has it started)."""
    from playground.worker.run.experiment import run_experiment

    started = time.monotonic()
    channel = inherited.channel
    if request.rank is not None:
        _as_rank(channel, request.rank)
    request = channel.expect(request)
    run_id = request.id
    witness = Witness(run_id, request.run.path, parent) if parent is not None else None
    if witness is not None:
        witness.install()

    sending = threading.Lock()  # the tracer watch speaks from a thread of its own

    def emit(event: dict[str, Any]) -> None:
        message = sanitize({"event": event["event"], "id": run_id, **event})
        with sending:
            try:
                channel.send(message)
            except ChannelLost:
                if witness is not None:
                    witness.lost(channel.out_fd, message)
                raise
            if witness is not None:
                witness.sent(message)
            watch.sent(message)

    watch = TracerWatch(emit, request.run.path).start()

    timeout = request.run.flags.timeout_s
    trace = None
    used_inductor = False
    with OutputCapture() as out:
        if timeout:
            # Dump the stack to the real stderr just before the template kills us.
            faulthandler.dump_traceback_later(dump_after(timeout), exit=False, file=inherited.crash_log)
        try:
            joined = _join(request)
            if joined is not None:
                report = joined
            else:
                outcome = run_experiment(
                    inherited.capturer,
                    request,
                    emit,
                    on_timing_start=out.set_mark,
                    inductor_started=inherited.inductor_started,
                )
                report, trace, used_inductor = outcome.report, outcome.trace, outcome.used_inductor
        except Exception as exc:  # noqa: BLE001 - a bug of ours still gets a report
            report = _internal_error(request, exc)
        finally:
            if request.rank is not None:
                ranks.leave()
            watch.stop()
            faulthandler.cancel_dump_traceback_later()
            limits.after_run()
    report = limits.over_cap(report, memory_cap)
    if request.rank is not None and request.run.program is None and report.error is not None:
        # A snippet's rank that failed stops the others at once, as a program's does (its own
        # reference has ended: the report is whole); one that lost its peer says nothing.
        ranks.say_failed(request.rank, report.error.message)
    worker = WorkerInfo(pid=os.getpid(), rss_mb=round(rss_mb(), 1), isolation="fork", peak_rss_mb=peak_rss_mb())
    report = replace(report, output=out.read(), worker=worker)
    message: dict[str, Any] = {"event": "report", "report": report.to_dict()}
    if request.run.trace:
        message["trace"] = trace or {"lines": [], "strings": []}
    if request.held:
        _hold_back(inherited, request, sanitize({"event": "report", "id": run_id, **message}), started)
    else:
        emit(message)
    return used_inductor


def _hold_back(inherited: Inherited, request: WorkerRequest, message: dict[str, Any], started: float) -> None:
    """The report down this process's own descriptor (readback.py), not the channel: the
    template sends it once the code child has added Dynamo's code, or merges it with the other
    ranks'. Under torchrun it is shared with the other nodes' ranks too."""
    written = encode(message)
    rank = request.rank.rank if request.rank is not None else 0
    send_back(inherited.report_fd, frame(rank, written))
    if request.rank is not None and request.rank.launch is not None:
        fd = inherited.report_fd
        ranks.share_report(
            written, lambda other, data: send_back(fd, frame(other, data)), _share_deadline(request, started)
        )


def _share_deadline(request: WorkerRequest, started: float) -> float:
    """How long a rank of torchrun's job waits for the other ranks' reports once its own is
    done: a collective's timeout (the ranks ran in step until their last collective), and
    never past the run's own timeout, at which the template kills it."""
    place = request.rank
    assert place is not None
    deadline = time.monotonic() + place.collective_timeout_s
    timeout = request.run.flags.timeout_s
    return deadline if timeout is None else min(deadline, started + timeout - 1.0)


def _as_rank(channel: Channel, place: RankPlace) -> None:
    """One rank of a run across ranks (process/rank_group.py): rank 0 speaks its progress on the
    channel as a run does, the others are muted; each sends its report down its own pipe, and writes
    its stack when the template asks with SIGUSR2 (it is about to kill a rank that still waits)."""
    if place.rank != 0:
        channel.mute()
    # A new file, never through a link or into a FIFO someone put there first.
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    with contextlib.suppress(OSError):  # without it, a rank killed at the timeout names no line
        stack = os.open(os.path.join(place.folder, f"rank{place.rank}.stack"), flags, 0o600)
        faulthandler.register(signal.SIGUSR2, file=stack, all_threads=False)


def _join(request: WorkerRequest) -> Report | None:
    """A rank's process group joined before the snippet loads; the report of a rank that could
    not join (another rank died first, the port was taken), else None."""
    place = request.rank
    if place is None:
        return None
    try:
        if place.launch is not None and request.run.program is not None:
            raise ranks.LaunchError(
                "a program is not run under torchrun yet (it makes its own group, which the next save's run "
                "would meet in torchrun's store): run it with torchrun itself, or with --ranks N on one machine"
            )
        ranks.join(
            place,
            port=place.port,
            device=request.run.settings.device,
            make_group=request.run.program is None,
            content=request.run.text,
        )
    except Exception as exc:  # noqa: BLE001 - torch.distributed's failure is this rank's report
        import torch

        from playground.worker.run.spine.failures import first_line, safe_str

        error = RunError(
            kind="worker",
            type=type(exc).__name__,
            message=f"rank {place.rank} could not join the process group: {first_line(safe_str(exc))}",
        )
        return Report(
            torch_version=torch.__version__, settings=request.run.settings, error=error, snippet=request.run.path
        )
    return None


def _internal_error(request: WorkerRequest, exc: BaseException) -> Report:
    """The report of a run that a bug of ours ended: the worker's error, nothing found."""
    import torch

    from playground.worker.run.spine.failures import failure

    error = replace(
        failure("worker", exc, request.run.path, "internal error in compile-playground's worker").error,
        line=None,
    )
    return Report(torch_version=torch.__version__, settings=request.run.settings, error=error, snippet=request.run.path)
