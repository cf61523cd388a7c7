"""Steady-state timings: eager and compiled in interleaved blocks, with how sure the ratio is.

The cold first call (compile included) is measured in calls.py; this module measures the warm
state. Eager and compiled alternate block by block (eager, compiled, compiled, eager, ...), so
that drift on a shared machine (another process, a CPU clocking down) hits both sides alike;
the speedup is the ratio of the per-call medians, and its spread the quartiles of the per-block
ratios. Worker-side (imports torch).
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from typing import Any

from playground.worker.run import ranks
from playground.worker.run.spine.calls import synchronize

#: At least this many blocks per side, and this many calls per side in all, unless the time
#: cap runs out first (then the timing says it is unreliable, and why).
MIN_BLOCKS = 6
MIN_RUNS = 5
#: A block's target length, as a share of min_run_time per side.
BLOCKS_PER_RUN_TIME = 8
#: The timing loop never takes longer than this many times min_run_time (or MIN_CAP_S).
CAP_FACTOR = 10
MIN_CAP_S = 4.0


def _block(fn: Callable[..., Any], args: tuple[Any, ...], n: int, device: str) -> float:
    """Seconds per call over `n` calls (the garbage collector off, as timeit has it)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        t0 = time.perf_counter()
        for _ in range(n):
            fn(*args)
        synchronize(device)
        return (time.perf_counter() - t0) / n
    finally:
        if enabled:
            gc.enable()


def _quartiles(values: list[float]) -> tuple[float, float, float]:
    if len(values) < 2:
        return values[0], values[0], values[0]
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], statistics.median(values), q[2]


def steady_state(
    eager: Callable[..., Any],
    compiled: Callable[..., Any],
    eager_args: tuple[Any, ...],
    compiled_args: tuple[Any, ...],
    *,
    min_run_time: float,
    device: str,
) -> dict[str, Any]:
    """Per-call medians and quartile ranges in ms, runs, blocks, and the ratio's quartiles."""
    sides = ((eager, eager_args), (compiled, compiled_args))
    for fn, args in sides:  # warm caches, the allocator and (for compiled) guard evaluation
        for _ in range(2):
            fn(*args)
    synchronize(device)
    # Calls per block from one timed call each: a block of each side lasts about
    # min_run_time / BLOCKS_PER_RUN_TIME.
    one = max(_block(eager, eager_args, 1, device), _block(compiled, compiled_args, 1, device), 1e-7)
    # Across ranks every rank makes the same calls (the snippet's collectives pair them).
    n = ranks.agreed_max(max(1, int(min_run_time / BLOCKS_PER_RUN_TIME / one)))
    cap = max(MIN_CAP_S, CAP_FACTOR * min_run_time)
    times: tuple[list[float], list[float]] = ([], [])
    started = time.perf_counter()
    block = 0
    while True:
        order = (0, 1) if block % 2 == 0 else (1, 0)
        for side in order:
            fn, args = sides[side]
            times[side].append(_block(fn, args, n, device))
        block += 1
        elapsed = time.perf_counter() - started
        enough = block >= MIN_BLOCKS and block * n >= MIN_RUNS and elapsed >= 2 * min_run_time
        if ranks.agreed_any(enough or elapsed >= cap):
            break
    e_q, c_q = _quartiles(times[0]), _quartiles(times[1])
    ratios = [e / c for e, c in zip(*times) if c > 0]
    r_q = _quartiles(ratios) if ratios else (None, None, None)
    return {
        "eager_ms": e_q[1] * 1e3,
        "compiled_ms": c_q[1] * 1e3,
        "eager_iqr_ms": (e_q[2] - e_q[0]) * 1e3,
        "compiled_iqr_ms": (c_q[2] - c_q[0]) * 1e3,
        "eager_runs": block * n,
        "compiled_runs": block * n,
        "speedup": e_q[1] / c_q[1] if c_q[1] > 0 else None,
        "speedup_low": r_q[0],
        "speedup_high": r_q[2],
        "blocks": block,
    }
