"""Limits a workshop host sets once for every session on a shared server, read from the
environment the worker inherits (docs/workshop.md). Worker-side; each applies in a run's child
only, never in the template that outlives the run:

- COMPILE_PLAYGROUND_THREADS: torch's intra-op threads per run (torch.set_num_threads), so
  that one attendee's run does not take every core; the timings use the same count.
- COMPILE_PLAYGROUND_RUN_MEMORY_MIB: what one run may allocate beyond the warm worker's own
  memory, as RLIMIT_DATA in the run's child. An allocation past it fails inside the snippet
  (torch raises, Python raises MemoryError), so the report is an error that names the cap,
  rather than the kernel's OOM killer ending whichever session it picks.
- COMPILE_PLAYGROUND_MIN_FREE_MIB: with less memory available than this (MemAvailable), no
  spare child is forked ahead and no heap is faulted in ahead (1024 by default; 0 never skips).
- COMPILE_PLAYGROUND_SPARE=0: never a spare child (about 150 MiB PSS per session, measured by
  benchmarks/workshop.py), whatever the memory; each run then forks its child when it starts.
"""

from __future__ import annotations

import os
import resource
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playground.engine.report import Report

THREADS_ENV = "COMPILE_PLAYGROUND_THREADS"
MEMORY_ENV = "COMPILE_PLAYGROUND_RUN_MEMORY_MIB"
MIN_FREE_ENV = "COMPILE_PLAYGROUND_MIN_FREE_MIB"
SPARE_ENV = "COMPILE_PLAYGROUND_SPARE"
MIN_FREE_MIB = 1024

#: What torch and C++ say when a host allocation is refused (the CPU allocator's words, errno
#: 12's); not CUDA's "out of memory", which is the device's, not this cap's.
_REFUSED = ("can't allocate memory", "cannot allocate memory", "std::bad_alloc")


def _whole(name: str, low: int, high: int) -> int | None:
    """The environment's `name` as a whole number within low..high; None when unset or not one."""
    raw = os.environ.get(name, "").strip()
    try:
        value = int(raw)
    except ValueError:
        return None
    return value if low <= value <= high else None


def threads() -> int | None:
    """Torch threads per run, or None for torch's own choice."""
    return _whole(THREADS_ENV, 1, 1024)


def set_lane_threads() -> tuple[int, int]:
    """In the findings lane: one thread fewer than a run gets, at least one. The lane traces
    while the run's child compiles on another core; with as many threads as cores, each of its
    parallel ops waited for a thread the child had descheduled (measured on a 2-core machine,
    a small Llama's lane: 2.3 s of a fork's trace and calls with 2 threads, 0.8 s with 1; a
    64x64 linear took 8 ms). Its values are compared with nothing: only Dynamo's findings
    are sent; Dynamo's global-state guard records the count, and run/findings_lane.py gives it
    back as the run's. (the run's count, the lane's)."""
    import torch

    count = threads() or torch.get_num_threads()
    torch.set_num_threads(max(1, count - 1))
    return count, torch.get_num_threads()


def memory_cap_mib() -> int | None:
    """MiB a run may allocate beyond the worker's own memory, or None for no cap."""
    return _whole(MEMORY_ENV, 1, 1 << 24)


def available_mib() -> int | None:
    """The kernel's estimate of memory available without swapping (/proc/meminfo)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def memory_short() -> bool:
    """Less memory available than COMPILE_PLAYGROUND_MIN_FREE_MIB: nothing is held ahead."""
    floor = _whole(MIN_FREE_ENV, 0, 1 << 24)
    floor = MIN_FREE_MIB if floor is None else floor
    available = available_mib()
    return floor > 0 and available is not None and available < floor


def spare_wanted() -> bool:
    """Whether a spare child may be forked ahead: not turned off, and memory not short."""
    return os.environ.get(SPARE_ENV, "1").strip() != "0" and not memory_short()


def set_threads() -> None:
    """In a run's child, before any parallel op (the spare's warm-up starts the pools)."""
    count = threads()
    if count is not None:
        import torch

        torch.set_num_threads(count)


def _data_now() -> int | None:
    """This process's data segment as RLIMIT_DATA counts it (VmData, private writable memory)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmData:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


#: Room above the cap for the child's own report once the run is over (`after_run`): a snippet
#: can raise its soft limit only this far.
REPORT_ROOM = 64 << 20


def cap_memory() -> int | None:
    """In a run's child, just before the run: RLIMIT_DATA set to what the child holds now plus
    the cap (the hard limit a little above, for the report). The cap in MiB, or None."""
    cap = memory_cap_mib()
    now = _data_now()
    if cap is None or now is None:
        return None
    soft = now + (cap << 20)
    hard = soft + REPORT_ROOM
    _, old_hard = resource.getrlimit(resource.RLIMIT_DATA)
    if old_hard != resource.RLIM_INFINITY:
        soft, hard = min(soft, old_hard), min(hard, old_hard)
    try:
        resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))
    except (ValueError, OSError):
        return None
    return cap


def after_run() -> None:
    """The run is over: its report may use the room left between the soft and hard limits."""
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    if soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_DATA, (hard, hard))
        except (ValueError, OSError):
            pass


def over_cap(report: Report, cap: int | None) -> Report:
    """`report` with an allocation failure's message naming the cap that refused it. A refusal
    in the tool's own work (the copies of the inputs that eager and compiled each get) is the
    snippet's too: its data is what filled the cap, so the error is a snippet error either way."""
    error = report.error
    if cap is None or error is None:
        return report
    lines = [line.strip() for line in error.detail.strip().splitlines() if line.strip()]
    raised = lines[-1] if lines else ""  # the exception itself, at the traceback's end
    words = f"{error.type} {error.message} {raised}".lower()
    if error.type != "MemoryError" and not any(refused in words for refused in _REFUSED):
        return report
    note = f"over the per-run memory cap of {cap} MiB ({MEMORY_ENV}, set by the host): "
    # Not "internal error in the worker": the exception itself.
    message = raised if error.kind == "worker" and raised else error.message
    kind = "snippet" if error.kind == "worker" else error.kind
    return replace(report, error=replace(error, kind=kind, message=note + message))
