"""What a run resets or patches in torch's process state: Dynamo's caches and counters, Inductor's
compile threads after a fork, its FX-graph and AOT-autograd caches, its random numbers."""

from __future__ import annotations

import itertools
import linecache
import re
import sys
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


#: Process-wide counters that torch._dynamo.reset() leaves alone, whose numbers reach a report:
#: the names Dynamo installs globals under (`G['__builtins_dict___16']`, `__compiled_fn_3`), the
#: compile numbers in others (`_<id>_c4`), its log's steps, its timers, AOTAutograd's graph
#: numbers. (FX's `<eval_with_key>.N` is kept too: process_counters_kept.)
_PROCESS_COUNTERS = (
    ("torch._dynamo.bytecode_transformation", "_unique_id_counter"),
    ("torch._dynamo.output_graph", "_compile_id_counter"),
    ("torch._dynamo.logging", "_step_counter"),
    ("torch._dynamo.utils", "timer_counter"),
    ("torch._dynamo.eval_frame", "_next_isolate_recompiles_id"),
    ("torch._functorch.aot_autograd", "AOT_COUNTER"),
)
_COUNT = re.compile(r"count\((-?\d+)\)")


@contextmanager
def process_counters_kept() -> Iterator[None]:
    """Dynamo's process-wide counters given back their values after the block: a trace the
    template makes for its own warm-up leaves a run's child numbering its names as it would have
    without it, which is how a fresh process numbers them."""
    saved: dict[tuple[str, str], int] = {}
    for module_name, name in _PROCESS_COUNTERS:
        counter = getattr(sys.modules.get(module_name), name, None)
        found = _COUNT.fullmatch(repr(counter)) if isinstance(counter, itertools.count) else None
        if found is not None:
            saved[(module_name, name)] = int(found.group(1))
    loader = _fx_loader()
    fx_state = (loader.next_id, set(loader.eval_cache)) if loader is not None else None
    try:
        yield
    finally:
        for (module_name, name), value in saved.items():
            setattr(sys.modules[module_name], name, itertools.count(value))
        if loader is not None and fx_state is not None:
            # FX names each graph's generated source `<eval_with_key>.N`, which a traceback
            # through a graph shows: N restarts where it was, and the block's sources go, from
            # linecache too, so that a later graph's N never finds the block's text.
            next_id, keys = fx_state
            for key in set(loader.eval_cache) - keys:
                loader.eval_cache.pop(key, None)
                linecache.cache.pop(key, None)
            loader.next_id = next_id


def _fx_loader() -> Any:
    loader = getattr(sys.modules.get("torch.fx.graph_module"), "_loader", None)
    if isinstance(getattr(loader, "next_id", None), int) and isinstance(getattr(loader, "eval_cache", None), dict):
        return loader
    return None


def forget_cleaned_bytecode() -> None:
    """Empty Dynamo's per-code-object cache of cleaned bytecode, which reset() keeps: an entry
    depends on a config switch read when it is made (debug_force_graph_break_on_leaf_return),
    so one made in the template could differ from what a snippet that sets the switch would
    get in a fresh process."""
    try:
        from torch._dynamo.bytecode_transformation import _cached_cleaned_instructions

        _cached_cleaned_instructions.cache_clear()
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
