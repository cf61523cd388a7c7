"""A run child's malloc: glibc's set up for a process that lives for one run, and put back as
a plain process has it before the timings. The spare child's heap faulted in ahead of its run
is process/memory.py. Worker-side; a no-op where malloc is not glibc's.

Measured (/proc's minor faults, a small eager snippet, children of a warm template): a run
took ~42,000 page faults. glibc hands freed memory back to the kernel (allocations over 128 KiB
are their own mmap, unmapped on free; the heap's top is trimmed), and a run allocates and frees
the same hundred megabytes over and over, so every reuse faulted in fresh zeroed pages again:
~25,000 of the faults. Keeping freed memory removes those; faulting 128 MiB of heap in while the
spare child waits removes another ~8,000. What is left is copy-on-write of the template's pages.
Together: a run's load and calls 15-30 % faster. A child ends with its run, so memory it keeps
is returned at exit; the price is the spare's 128 MiB, held while it waits.

What this changes in a report: the cold compile (`compile_s`) no longer pays that churn, so it
is shorter than the same compile in a plain process with glibc's defaults (a small eager graph:
about half). The steady-state timings are not changed: they run after as_a_plain_process().
"""

from __future__ import annotations

import ctypes
import functools

#: mallopt's parameters (malloc.h).
_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3


@functools.cache
def glibc() -> ctypes.CDLL | None:
    """This process's C library when it is glibc, looked up once (the template imports this
    module, so its children inherit the lookup; ctypes.util.find_library would start ldconfig,
    a subprocess, on every call on the run's path). None elsewhere (musl, macOS: no mallopt)."""
    try:
        libc = ctypes.CDLL(None)  # the symbols already loaded: malloc is the process's own
        libc.mallopt  # noqa: B018 - the attribute lookups are the test
        libc.gnu_get_libc_version  # noqa: B018
    except (OSError, AttributeError):
        return None
    libc.malloc.restype = ctypes.c_void_p
    libc.malloc.argtypes = [ctypes.c_size_t]
    libc.free.argtypes = [ctypes.c_void_p]
    libc.mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    libc.malloc_trim.argtypes = [ctypes.c_size_t]
    return libc


glibc()  # here, in the template, before any fork


#: This process is a run's child (keep_freed_memory() ran here): only children are tuned.
_child = False
#: (mmap threshold, trim threshold, top pad): freed memory kept, and as a plain process keeps it.
_KEEP = (1 << 30, 2**31 - 1, 64 << 20)
_PLAIN = (32 << 20, 64 << 20, 128 << 10)


def _apply(settings: tuple[int, int, int]) -> bool:
    libc = glibc()
    if libc is None:
        return False
    mmap_threshold, trim_threshold, top_pad = settings
    ok = libc.mallopt(_M_MMAP_THRESHOLD, mmap_threshold) == 1
    ok &= libc.mallopt(_M_TRIM_THRESHOLD, trim_threshold) == 1
    ok &= libc.mallopt(_M_TOP_PAD, top_pad) == 1
    return bool(ok)


def keep_freed_memory() -> bool:
    """Freed memory stays in this process's heap for reuse (no trimming, no per-allocation
    mmap below 1 GiB). For children only: the template lives for hours and must give back."""
    global _child
    _child = True
    return _apply(_KEEP)


def before_run() -> None:
    """At the start of every run in a child: freed memory kept again. A spare child's warm-up
    is a whole run, whose timing phase put the plain settings back (as_a_plain_process)."""
    if _child:
        _apply(_KEEP)


def as_a_plain_process() -> bool:
    """Before the steady-state timings: malloc as a long-running plain process settles on it, so
    that eager and compiled are timed as `torch.utils.benchmark` times them in the user's own
    program. glibc's mmap threshold rises with use to at most 32 MiB and trims at twice that;
    allocations above it are mapped and unmapped on every call, which is part of what a large
    tensor costs there (measured: x * 2 + 1 on a 64 MiB tensor, 88 ms a call with glibc's
    defaults, 27 ms with freed memory kept). The memory kept so far is given back too, as a
    plain process would have: a free block left at the heap's top would otherwise serve the
    first large allocations without a fault. A no-op unless keep_freed_memory() ran here."""
    libc = glibc() if _child else None
    if libc is None:
        return False
    ok = _apply(_PLAIN)
    libc.malloc_trim(0)
    return ok
