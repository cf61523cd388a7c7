"""A run's child: what a forked process does from the fork to os._exit - one run, its events
and report on the channel. Also the same run done in place (no isolation), and issue 12's code
child (dynamo_code/held_report.py). Worker-side."""

from __future__ import annotations

import faulthandler
import json
import math
import os
import signal
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from playground.engine.report import Output, Report, WorkerInfo
from playground.engine.settings import Settings
from playground.worker.dynamo_code.held_report import CODE_TO, REPORT_TO, write_json
from playground.worker.process import limits, memory, procs, warmup
from playground.worker.process.channel import ChannelLost, sanitize
from playground.worker.process.output import OutputCapture
from playground.worker.process.witness import Witness

if TYPE_CHECKING:
    from playground.worker.process.template import Template

#: The longest run timeout the worker accepts (faulthandler's timer overflows on inf or 1e12).
MAX_TIMEOUT_S = 7 * 24 * 3600.0


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


def run_timeout(request: dict[str, Any]) -> float | None:
    """The request's timeout as a sane float, None for no timeout."""
    try:
        value = float(request.get("timeout_s") or 0)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(value) or value <= 0:
        return None
    return min(value, MAX_TIMEOUT_S)


def run_child(template: Template, request: dict[str, Any], parent: int) -> None:
    """The forked child: one run, its report on the channel, then os._exit (never returns)."""
    code = 0
    try:
        _become_child(template, parent)
        run_here(template, request, limits.cap_memory(), parent)
    except BaseException:  # noqa: BLE001 - nothing may escape into the template's code
        code = 70
    finally:
        os._exit(code)


def spare_child(template: Template, read_fd: int, ready_fd: int, parent: int) -> None:
    """A child forked ahead of its run: it warms itself, then waits for its request."""
    code = 0
    try:
        _become_child(template, parent)
        if os.environ.get("COMPILE_PLAYGROUND_WARMUP", "1") != "0":
            from playground.worker import compat

            template.warm("eager")
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
            run_here(template, json.loads(data), limits.cap_memory(), parent)
    except BaseException:  # noqa: BLE001 - nothing may escape into the template's code
        code = 70
    finally:
        os._exit(code)


def code_child(template: Template, request: dict[str, Any], parent: int) -> None:
    """Issue 12's second child: the request's calls again under depyf, what it decompiled
    written where the template reads it (dynamo_code/held_report.py), then os._exit (never returns)."""
    code = 0
    try:
        _become_child(template, parent)
        from playground.worker.dynamo_code.depyf_rerun import collect

        channel = template.channel
        request = channel.expect(request)
        run_id = request.get("id")

        def emit(event: dict[str, Any]) -> None:
            if event.get("event") == "progress":  # the run is past its calls: say whose these are
                words = f"depyf: {event.get('message', '')}"
                call, calls = event.get("call"), event.get("calls")
                progress = {"phase": "dynamo_code", "call": call, "calls": calls, "message": words}
                channel.send(sanitize({"event": "progress", "id": run_id, **progress}))

        with OutputCapture():  # the snippet's output was the run's, already in its report
            result = collect(template.capturer, request, emit)
        write_json(request[CODE_TO], sanitize(result))
    except BaseException:  # noqa: BLE001 - nothing may escape into the template's code
        code = 70
    finally:
        os._exit(code)


def _become_child(template: Template, parent: int) -> None:
    """What every child does first: die with the template, default signals, no reading."""
    procs.die_with_parent(signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)  # the template died between fork and prctl
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    os.close(template.channel.in_fd)  # only the template reads requests
    for fd in template.spare.fds():
        os.close(fd)  # a run child must not hold the spare's pipes open
    memory.keep_freed_memory()  # it lives for one run: freed memory is reused, not refaulted
    limits.set_threads()  # the host's share of the cores, before a warm-up starts the pools


def run_here(
    template: Template, request: dict[str, Any], memory_cap: int | None = None, parent: int | None = None
) -> None:
    """One run where we are (a forked child of the template `parent`, or the template without
    isolation): its events and its report on the channel. `memory_cap` (MiB) is the cap
    `limits.cap_memory` set here: an allocation it refused is named so in the report."""
    from playground.worker.run.experiment import run_experiment

    channel = template.channel
    request = channel.expect(request)
    run_id = request.get("id")
    witness = Witness(run_id, str(request.get("path", "")), parent) if parent is not None else None
    if witness is not None:
        witness.install()

    def emit(event: dict[str, Any]) -> None:
        message = sanitize({"event": event["event"], "id": run_id, **event})
        try:
            channel.send(message)
        except ChannelLost:
            if witness is not None:
                witness.lost(channel.out_fd, message)
            raise
        if witness is not None:
            witness.sent(message)

    timeout = run_timeout(request)
    trace = None
    with OutputCapture() as out:
        if timeout:
            # Dump the stack to the real stderr just before the template kills us.
            faulthandler.dump_traceback_later(max(timeout - 0.5, 0.5), exit=False, file=template.crash_log)
        try:
            outcome = run_experiment(
                template.capturer,
                request,
                emit,
                on_timing_start=out.set_mark,
                inductor_started=template.inductor_started,
            )
            report, trace = outcome.report, outcome.trace
            template.inductor_started |= outcome.used_inductor  # a run without isolation stays here
        except Exception as exc:  # noqa: BLE001 - a bug of ours still gets a report
            report = _internal_error(request, exc)
        finally:
            faulthandler.cancel_dump_traceback_later()
            limits.after_run()
    report = limits.over_cap(report, memory_cap)
    worker = WorkerInfo(pid=os.getpid(), rss_mb=round(rss_mb(), 1), isolation="fork", peak_rss_mb=peak_rss_mb())
    report = replace(report, output=Output.from_dict(out.read()), worker=worker)
    message: dict[str, Any] = {"event": "report", "report": report.to_dict()}
    if request.get("trace"):
        message["trace"] = trace or {"lines": [], "strings": []}
    if request.get(REPORT_TO):
        # Issue 12: the template sends it once the code child has added Dynamo's code.
        write_json(request[REPORT_TO], sanitize({"event": "report", "id": run_id, **message}))
    else:
        emit(message)


def _internal_error(request: dict[str, Any], exc: BaseException) -> Report:
    """The report of a run that a bug of ours ended: the worker's error, nothing found."""
    import torch

    from playground.worker.run.failures import failure

    error = replace(
        failure("worker", exc, request.get("path", ""), "internal error in compile-playground's worker").error,
        line=None,
    )
    try:
        settings = Settings.from_dict(request.get("settings"))
    except (TypeError, ValueError):
        settings = Settings()
    return Report(torch_version=torch.__version__, settings=settings, error=error, snippet=str(request.get("path", "")))
