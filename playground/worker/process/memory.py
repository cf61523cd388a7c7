"""The spare child's heap faulted in ahead of its run, so the run's first allocations find their
pages in place (measured, and why malloc keeps them: run/spine/malloc.py). Worker-side.
"""

from __future__ import annotations

import ctypes
import os

from playground.worker.process import limits
from playground.worker.run.spine.malloc import before_run, glibc

#: How much heap the spare child faults in ahead of its run (a small run's churn, measured);
#: COMPILE_PLAYGROUND_PREFAULT_MIB sets it (0: none, for a server short of memory).
PREFAULT_MIB = 128
MAX_PREFAULT_MIB = 4096


def prefault_mib() -> int:
    """COMPILE_PLAYGROUND_PREFAULT_MIB as a whole number of MiB within 0..4096; anything else
    (empty, not a number, negative) is the default."""
    try:
        value = int(os.environ.get("COMPILE_PLAYGROUND_PREFAULT_MIB", PREFAULT_MIB))
    except ValueError:
        return PREFAULT_MIB
    return min(value, MAX_PREFAULT_MIB) if value >= 0 else PREFAULT_MIB


def prefault_heap(mib: int | None = None) -> bool:
    """Grow the heap by `mib` and touch every page, then free it: with keep_freed_memory() it
    stays, and the run's first allocations land on pages already faulted in."""
    mib = prefault_mib() if mib is None else mib
    before_run()  # the spare's warm-up ended in its timing phase, with the plain settings
    libc = glibc()
    if libc is None or mib <= 0 or limits.memory_short():
        return False
    size = mib << 20
    block = libc.malloc(size)
    if not block:
        return False
    ctypes.memset(block, 0, size)
    libc.free(block)
    return True
