"""Fixes tried: for each break site and each recompiling function of a run, the remedies torch
offers for it, each run as a variant of the same save, and what each achieved. Torch-free.

`Fix` is one remedy's result (the contract's "Fixes tried" entry, with extensions after its
keys); `FixAdvice` is a target that no remedy tried removed, with the rewrite torch documents
for it. The worker proposes the remedies (playground/worker/run/fixes/) and builds both.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from playground.engine.report.wire import Wire, absent_if_empty, absent_if_none, wire

#: The contract's equivalence words, best first (an unknown one sorts last).
FIX_EQUIVALENCE = ("ok", "rounding", "FAIL", "error")


@dataclass(frozen=True)
class FixTarget(Wire):
    """What a remedy is for: a break site (`kind` "break", its snippet line) or a recompiling
    function ("recompile", the line its guard named, and the function's name)."""

    kind: str = "break"
    line: int | None = None
    function: str = wire("", omit=absent_if_empty("function"))
    #: The break's type as torch names it (gb_type): a remedy that leaves another break on the
    #: same line has removed this one and moved the graph's split there.
    what: str = wire("", omit=absent_if_empty("what"))

    def label(self) -> str:
        where = f"line {self.line}" if self.line is not None else "its frame"
        return f"{self.kind} at {where}" + (f" ({self.function})" if self.function else "")


@dataclass(frozen=True)
class FixAfter(Wire):
    """The counts torch gave the variant's run."""

    graph_count: int = 0
    graph_break_count: int = 0
    recompile_count: int = 0


@dataclass(frozen=True)
class Fix(Wire):
    """One remedy tried on one target: the change a user would write, what torch did with it."""

    target: FixTarget = field(default_factory=FixTarget)
    #: The mechanism: "config", "mark_dynamic", "dynamic", "nonstrict_trace", "custom_op",
    #: "disable", "allow_in_graph", "reorderable_logging".
    remedy: str = ""
    #: What the user would add to make it permanent (may be several lines).
    change: str = ""
    #: None when the variant produced no report (it was killed, or could not run).
    after: FixAfter | None = None
    #: "ok", "rounding", "FAIL" or "error" (FIX_EQUIVALENCE).
    equivalence: str = "error"
    speedup: float | None = None
    error: str | None = None
    # --- extensions (docs/report.md) ---
    #: The target's break (or recompile) is gone in the variant's run.
    removed: bool = wire(False, omit=absent_if_empty("removed"))
    #: Break lines the variant has that the run without the change did not: where a moved break went.
    moved_to: tuple[int, ...] = wire((), omit=absent_if_empty("moved_to"))
    #: What the snippet printed, against the run without the change: "same", "dropped" (nothing
    #: printed where it printed), "changed" ("" when the run printed nothing either way).
    prints: str = wire("", omit=absent_if_empty("prints"))
    #: Module state the calls changed (buffers, parameters), compiled against eager: "same" or "differs".
    state: str = wire("", omit=absent_if_empty("state"))
    #: The equivalence's own verdict ("identical", "within tolerance", ...) behind `equivalence`.
    verdict: str = wire("", omit=absent_if_empty("verdict"))
    #: What the remedy does, in torch's terms; and why the speedup or the verdict is to be read carefully.
    note: str = wire("", omit=absent_if_empty("note"))
    #: The variant's wall time, seconds.
    seconds: float | None = wire(None, omit=absent_if_none("seconds"))

    def achieves(self) -> tuple[int, int, int, int, float]:
        """A sort key, best first: target removed with equal values, fewer breaks and graphs,
        fewer recompiles, then faster."""
        rank = FIX_EQUIVALENCE.index(self.equivalence) if self.equivalence in FIX_EQUIVALENCE else len(FIX_EQUIVALENCE)
        after = self.after
        keeps = rank <= 1 and self.prints in ("", "same") and self.state in ("", "same")
        return (
            (0 if not self.moved_to else 1) if (self.removed and keeps) else 2 if self.removed else 3,
            rank,
            after.graph_break_count + after.graph_count if after is not None else 1 << 30,
            after.recompile_count if after is not None else 1 << 30,
            -(self.speedup or 0.0),
        )


@dataclass(frozen=True)
class FixAdvice(Wire):
    """A target that no remedy tried removed: why, and the rewrite torch documents for it."""

    target: FixTarget = field(default_factory=FixTarget)
    why: str = ""
    rewrite: str = ""


def ordered(fixes: tuple[Fix, ...] | list[Fix]) -> tuple[Fix, ...]:
    """The fixes by what they achieve, best first (stable: equal ones keep their order)."""
    return tuple(sorted(fixes, key=Fix.achieves))
