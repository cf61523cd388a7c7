"""The timing phase: the last call, eager against compiled in the steady state, with the cold
first call and what Inductor's caches did then, as one `Timings` value. Worker-side."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from playground.engine.report import Timings
from playground.engine.settings import Settings
from playground.worker import timing
from playground.worker.calls import CallsDone, clone_args
from playground.worker.context import RunContext
from playground.worker.failures import failure, raised_in_snippet


class _Counted:
    """A callable that counts its calls: a failure during timing names the call."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.calls = 0

    def __call__(self, *args: Any) -> Any:
        self.calls += 1
        return self.fn(*args)


def time_calls(ctx: RunContext, done: CallsDone, target: Callable[..., Any], first_inductor: bool) -> Timings:
    """Eager and compiled on the last call's inputs; `first_inductor`: this process had never run
    Inductor, so the cold compile holds its one-time start-up."""
    settings = ctx.settings
    index = done.records[-1].index
    ctx.progress("timing", f"timing eager vs compiled on call {index}", index)
    steady = _steady(ctx, done, target)
    for key in ("eager_ms", "compiled_ms", "speedup", "eager_iqr_ms", "compiled_iqr_ms"):
        if steady.get(key) is not None and not math.isfinite(steady[key]):
            steady[key] = None
    note = ""
    if settings.backend == "inductor" and first_inductor:
        note = "first Inductor run in this worker: compile_s includes Inductor's one-time start-up"
    return Timings.from_dict(
        {
            "note": note,
            "compile_s": done.compile_s,
            "device": settings.device,
            "compile_cache": cache_word(settings, done.cache_at_first_call),
            "cache_counts": done.cache_at_first_call,
            "timed_call": index,
            **steady,
        }
    )


def _steady(ctx: RunContext, done: CallsDone, target: Callable[..., Any]) -> dict[str, Any]:
    snapshot = done.records[-1].snapshot
    eager_counted = _Counted(target)
    compiled_counted = _Counted(done.compiled)
    try:
        return timing.steady_state(
            eager_counted,
            compiled_counted,
            clone_args(snapshot),
            clone_args(snapshot),
            min_run_time=ctx.request.min_run_time,
            device=ctx.settings.device,
        )
    except Exception as exc:  # noqa: BLE001 - the timing loop calls the snippet again, many times
        side, counted = ("eager", eager_counted) if compiled_counted.calls == 0 else ("compiled", compiled_counted)
        # The snippet raising by itself (a model that fails on its fifth call) is the snippet's;
        # only the compiled side raising without the snippet's code on the stack is torch.compile's.
        kind = "snippet" if side == "eager" or raised_in_snippet(exc, ctx.path) else "compile"
        raise failure(
            kind, exc, ctx.path, f"raised during timing, {side} call {counted.calls} of the timing loop"
        ) from None


def cache_word(settings: Settings, counts: dict[str, int]) -> str:
    """What Inductor's FX-graph and AOT-autograd caches did on the first call: "hit", "miss",
    "partial", "disabled" (a cold run) or "n/a" (another backend, or nothing looked up)."""
    if settings.backend != "inductor":
        return "n/a"
    if settings.cold:
        return "disabled"
    hits = counts.get("fxgraph_hit", 0) + counts.get("autograd_hit", 0)
    misses = counts.get("fxgraph_miss", 0) + counts.get("autograd_miss", 0)
    return "hit" if hits and not misses else "miss" if misses and not hits else "partial" if hits else "n/a"
