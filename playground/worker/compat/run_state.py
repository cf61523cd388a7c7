"""What a run resets or patches in torch's process state: Dynamo's caches and counters, Inductor's
compile threads after a fork, its FX-graph and AOT-autograd caches, its random numbers."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch
import torch._dynamo


def counters() -> Any:
    from torch._dynamo.utils import counters as _counters

    return _counters


def clear_run_state() -> None:
    """reset() leaves counters and the compilation-metrics deque alone: clear them too, or a
    run would report its predecessor's numbers."""
    torch._dynamo.reset()
    counters().clear()
    try:
        from torch._dynamo.utils import _compilation_metrics

        _compilation_metrics.clear()
    except (ImportError, AttributeError):
        pass


def forget_compile_threads() -> None:
    """In a forked child: drop Inductor's compile thread pool inherited from the template.

    torch resets its compile *process* pool after a fork (async_compile.after_fork), not the
    thread pool (AsyncCompile.pool, an lru_cache'd ThreadPoolExecutor) that C++ compiles are
    submitted to. A child that inherits one the template used (its Inductor warm-up compiled
    a kernel on a cold cache) holds an executor whose threads do not exist there: it sees
    them idle, starts none, and waits forever on its first C++ compile (measured: torch 2.13,
    a cold Inductor cache, a child forked after the template's warm-up)."""
    try:
        from torch._inductor.async_compile import AsyncCompile

        AsyncCompile.pool.cache_clear()
    except (ImportError, AttributeError):
        pass


@contextmanager
def compile_caches_disabled(disabled: bool) -> Iterator[None]:
    """Turn off Inductor's FX-graph and AOT-autograd caches (they survive dynamo.reset())."""
    if not disabled:
        yield
        return
    import torch._inductor.config as inductor_config

    patches: dict[str, Any] = {}
    for key in ("force_disable_caches", "fx_graph_cache", "fx_graph_remote_cache"):
        if hasattr(inductor_config, key):
            patches[key] = key == "force_disable_caches"
    with inductor_config.patch(patches):
        try:
            import torch._functorch.config as functorch_config

            ctx = functorch_config.patch(enable_autograd_cache=False)
        except (ImportError, AttributeError):  # pragma: no cover - older torch
            ctx = _nullcontext()
        with ctx:
            yield


@contextmanager
def _nullcontext() -> Iterator[None]:
    yield


@contextmanager
def deterministic_inductor_rng() -> Iterator[None]:
    """Make Inductor draw random numbers through eager's generator (fallback_random), so that
    dropout under the same seed agrees between eager and compiled."""
    import torch._inductor.config as inductor_config

    with inductor_config.patch(fallback_random=True):
        yield


def cache_counts() -> dict[str, int]:
    """Inductor FX-graph and AOT-autograd cache hits and misses since counters were cleared."""
    c = counters()
    inductor = c.get("inductor", {})
    aot = c.get("aot_autograd", {})
    return {
        "fxgraph_hit": int(inductor.get("fxgraph_cache_hit", 0)),
        "fxgraph_miss": int(inductor.get("fxgraph_cache_miss", 0)),
        "autograd_hit": int(aot.get("autograd_cache_hit", 0)),
        "autograd_miss": int(aot.get("autograd_cache_miss", 0)),
    }


def dynamo_frames() -> tuple[int, int]:
    """The Python frames Dynamo was handed since counters were cleared (every cache miss of a
    compiled function, a resume function after a break included) and how many it converted;
    the rest it gave up on, and they ran eagerly."""
    frames = counters().get("frames", {})
    return int(frames.get("total", 0)), int(frames.get("ok", 0))
