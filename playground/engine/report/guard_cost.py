"""What guard evaluation costs the timed call (extension fields; the worker's run/ measures it)."""

from __future__ import annotations

from dataclasses import dataclass

from playground.engine.report.wire import Wire


@dataclass(frozen=True)
class EntryGuardCount(Wire):
    """One compiled entry of the target's frame and the leaf guards a full check evaluates."""

    compile_id: str = ""
    guards: int | None = None


@dataclass(frozen=True)
class GuardCost(Wire):
    """What guard evaluation costs a call of the target, measured on the timed call's arguments
    after the timing: the entries checked in torch's order (most recent first) until one
    passes, `guards_evaluated` at most the leaves of those entries (a failing entry stops at its
    first failing guard), `check_us` the median time of that sequence of checks per call (the
    C++ frame evaluation around it not included), and its `share` of the compiled call
    (`compiled_us`, the timing's median). `lookup_us`: the profiler's "TorchDynamo Cache Lookup"
    per call, when the kernels profile ran. Only the target's own frame: a frame resumed after a
    break has guards of its own."""

    timed_call: int | None = None
    entries: tuple[EntryGuardCount, ...] = ()
    entry: str | None = None
    entries_tried: int = 0
    guards_evaluated: int | None = None
    check_us: float | None = None
    compiled_us: float | None = None
    share: float | None = None
    lookup_us: float | None = None
    note: str = ""
