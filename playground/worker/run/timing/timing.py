"""The timing phase: the last call, eager against compiled in the steady state, with the cold
first call and what Inductor's caches did then, as one `Timings` value. Worker-side."""

from __future__ import annotations

import math
from collections.abc import Callable
from types import MappingProxyType
from typing import Any

import torch

from playground.engine.report import Machine, Timings
from playground.engine.settings import Settings
from playground.worker.run.spine.calls import CallsDone, clone_args
from playground.worker.run.spine.context import RunContext
from playground.worker.run.spine.failures import failure, raised_in_snippet
from playground.worker.run.timing import machine, steady_state


class _Counted:
    """A callable that counts its calls: a failure during timing names the call."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.calls = 0

    def __call__(self, *args: Any) -> Any:
        self.calls += 1
        return self.fn(*args)


def time_calls(
    ctx: RunContext, done: CallsDone, target: Callable[..., Any], first_inductor: bool, frames: int = 1
) -> Timings:
    """Eager and compiled on the last call's inputs; `first_inductor`: this process had never run
    Inductor, so the cold compile holds its one-time start-up; `frames`: the graphs and breaks
    each compiled call goes through (what Dynamo's per-call overhead scales with)."""
    settings = ctx.settings
    index = done.records[-1].index
    ctx.progress("timing", f"timing eager vs compiled on call {index}", index)
    watch = machine.Watch.start()
    steady = _steady(ctx, done, target)
    seen = watch.stop()
    for key in ("eager_ms", "compiled_ms", "speedup", "eager_iqr_ms", "compiled_iqr_ms", "speedup_low", "speedup_high"):
        if steady.get(key) is not None and not math.isfinite(steady[key]):
            steady[key] = None
    note = ""
    if settings.backend == "inductor" and first_inductor:
        note = "first Inductor run in this worker: compile_s includes Inductor's one-time start-up"
    return Timings(
        note=note,
        compile_s=done.compile_s,
        device=settings.device,
        compile_cache=cache_word(settings, done.cache_at_first_call),
        cache_counts=MappingProxyType(dict(done.cache_at_first_call)),
        timed_call=index,
        **steady,
        unreliable=unreliable(settings.backend, steady, seen, frames),
        machine=seen,
        threads=torch.get_num_threads(),
    )


def _steady(ctx: RunContext, done: CallsDone, target: Callable[..., Any]) -> dict[str, Any]:
    snapshot = done.records[-1].snapshot
    eager_counted = _Counted(target)
    compiled_counted = _Counted(done.compiled)
    try:
        return steady_state.steady_state(
            eager_counted,
            compiled_counted,
            clone_args(snapshot),
            clone_args(snapshot),
            min_run_time=ctx.request.run.flags.min_run_time,
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


#: Others' CPU time on our CPUs (a share of them) past which the machine counts as busy.
BUSY_SHARE = 0.25
#: The spread of the per-block ratio (upper quartile over lower) past which it means nothing.
MAX_SPREAD = 1.5
#: The eager and aot_eager backends run the very ops eager runs: Dynamo can only take Python's
#: overhead away (tiny models: a few times faster at most) and add its own, tens of
#: microseconds per frame. Outside these, the measurement is wrong, not the compile.
SAME_OPS_BACKENDS = frozenset({"eager", "aot_eager"})
SAME_OPS_MAX_SPEEDUP = 4.0
SAME_OPS_OVERHEAD_MS = 1.0  # and 0.2 ms more per frame


def unreliable(backend: str, steady: dict[str, Any], seen: Machine, frames: int) -> str:
    """Why this speedup is not to be believed, in words ("" when it is): the views print this
    in place of the number."""
    why = []
    runs = min(steady.get("eager_runs") or 0, steady.get("compiled_runs") or 0)
    if runs < steady_state.MIN_RUNS:
        eager_ms = steady.get("eager_ms") or 0.0
        why.append(f"{runs} run{'s' if runs != 1 else ''} (a call takes {eager_ms:.3g} ms; raise --min-run-time)")
    if seen.others_cpu is not None and seen.cpus and seen.others_cpu > BUSY_SHARE * seen.cpus:
        why.append(f"machine busy: other processes used {seen.others_cpu:.2g} of {seen.cpus} CPUs meanwhile")
    low, high = steady.get("speedup_low"), steady.get("speedup_high")
    if low and high and high / low > MAX_SPREAD:
        why.append(f"the ratio swung from {low:.3g}x to {high:.3g}x between blocks")
    speedup, e_ms, c_ms = steady.get("speedup"), steady.get("eager_ms"), steady.get("compiled_ms")
    if backend in SAME_OPS_BACKENDS and speedup and e_ms is not None and c_ms is not None:
        overhead = SAME_OPS_OVERHEAD_MS + 0.2 * max(frames, 1)
        if speedup > SAME_OPS_MAX_SPEEDUP or (c_ms - e_ms > overhead and speedup < 1 / SAME_OPS_MAX_SPEEDUP):
            why.append(
                f"a measurement problem: backend {backend} runs eager's own ops, so {speedup:.3g}x "
                f"(eager {e_ms:.3g} ms, compiled {c_ms:.3g} ms) cannot be its result"
            )
    return "; ".join(why)


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
