"""What a guard filter or skip_guard_eval_unsafe would save the timed call (extension fields)."""

from __future__ import annotations

from dataclasses import dataclass

from playground.engine.report.wire import Wire


@dataclass(frozen=True)
class FilterPreview(Wire):
    """What one of torch.compiler's guard filters would drop of the guards handed to the filter in
    the what-if's recompile (the Python-side guards, before they become leaves)."""

    filter: str = ""
    drops: int = 0


@dataclass(frozen=True)
class GuardWhatIf(Wire):
    """The timed call's guards under torch's unsafe switches, measured on request after the
    timing (the run's own figures never include it). `filter`: the torch.compiler guard filter
    applied in a recompile of the same target (`reset()`, the same calls of inputs() with their
    recorded arguments, forward only): of the `filter_guards` guards handed to it, `dropped`, the
    sources they read named as the snippet does (`dropped_sources`, the first few). Before is
    the run's own cache entries, after the recompile's: `entries_*` in the target's frame,
    `guards_*` the leaf guards of the entry that serves the timed call, `check_us_*` the timed
    call's guard checks (guard_cost's way), `lookup_us_*` the profiler's "TorchDynamo Cache
    Lookup", `call_us_*` the compiled call: medians per call, each `*_noise_us` the larger
    interquartile range of its two. `outputs_agree`: whether the timed call's outputs under the
    filter equal those without it, exactly (`output_max_abs` the largest difference).
    `stance_*`: the run's own entries under set_stance(skip_guard_eval_unsafe=True), no
    recompile (with one entry no guard is checked); `stance_probe_stale`: on this torch, a
    function compiled for flag=True and called with flag=False under that stance returned
    flag=True's result; `stance_error`: what torch raised when the timed call ran under it.
    `preview`: what each filter torch ships would drop of the same guards. `note`: why a part
    was not measured."""

    timed_call: int | None = None
    target: str = ""
    filter: str = ""
    filter_guards: int = 0
    dropped: int = 0
    dropped_sources: tuple[str, ...] = ()
    entries_before: int = 0
    entries_after: int | None = None
    guards_before: int | None = None
    guards_after: int | None = None
    check_us_before: float | None = None
    check_us_after: float | None = None
    check_noise_us: float | None = None
    lookup_us_before: float | None = None
    lookup_us_after: float | None = None
    lookup_noise_us: float | None = None
    call_us_before: float | None = None
    call_us_after: float | None = None
    call_noise_us: float | None = None
    outputs_agree: bool | None = None
    output_max_abs: float | None = None
    stance_lookup_us: float | None = None
    stance_call_us: float | None = None
    stance_probe_stale: bool | None = None
    stance_error: str = ""
    preview: tuple[FilterPreview, ...] = ()
    note: str = ""
