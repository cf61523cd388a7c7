"""Steady-state timings with torch.utils.benchmark, bounded in total time.

The cold first call (compile included) is measured in calls.py; this module measures the
warm state side by side: eager then compiled on the same call's inputs. torch.utils.benchmark
synchronizes CUDA itself when the inputs live there. Worker-side (imports torch).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.utils.benchmark as benchmark


def synchronize(device: str) -> None:
    if device.startswith("cuda") and torch.cuda.is_available():
        torch.cuda.synchronize()


def measure(fn: Callable[..., Any], args: tuple[Any, ...], min_run_time: float, device: str) -> dict[str, Any]:
    """Median and interquartile range in milliseconds, and the number of runs."""
    for _ in range(2):  # warm caches, allocator and (for compiled) guard evaluation paths
        fn(*args)
    synchronize(device)
    # Timer defaults to one thread; changing the thread count would also fail Dynamo's
    # global-state guard and recompile in the middle of the measurement.
    timer = benchmark.Timer(stmt="fn(*args)", globals={"fn": fn, "args": args}, num_threads=torch.get_num_threads())
    m = timer.blocked_autorange(min_run_time=min_run_time)
    return {
        "median_ms": m.median * 1e3,
        "iqr_ms": m.iqr * 1e3,
        "runs": len(m.times) * m.number_per_run,
    }


def steady_state(
    eager: Callable[..., Any],
    compiled: Callable[..., Any],
    eager_args: tuple[Any, ...],
    compiled_args: tuple[Any, ...],
    *,
    min_run_time: float,
    device: str,
) -> dict[str, Any]:
    e = measure(eager, eager_args, min_run_time, device)
    c = measure(compiled, compiled_args, min_run_time, device)
    speedup = e["median_ms"] / c["median_ms"] if c["median_ms"] > 0 else None
    return {
        "eager_ms": e["median_ms"],
        "compiled_ms": c["median_ms"],
        "eager_iqr_ms": e["iqr_ms"],
        "compiled_iqr_ms": c["iqr_ms"],
        "eager_runs": e["runs"],
        "compiled_runs": c["runs"],
        "speedup": speedup,
    }
