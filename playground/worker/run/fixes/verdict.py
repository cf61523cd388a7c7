"""A variant's report read into a `Fix`, against the run without the change: the counts after,
whether the target is gone and where a moved break went, the equivalence (values and
gradients, module state), what it printed, the speedup. Worker-side, torch-free."""

from __future__ import annotations

from playground.engine.report import Fix, FixAdvice, FixAfter, Report
from playground.worker.run.fixes.candidates import Candidate


def fix_of(candidate: Candidate, base: Report, after: Report | None, ended: str, seconds: float) -> Fix:
    """The remedy's result: `after` is the variant's report, None when it gave none (`ended`
    says how its process ended)."""
    fix = Fix(
        target=candidate.target,
        remedy=candidate.remedy,
        change=candidate.change,
        note=candidate.note,
        seconds=round(seconds, 3),
    )
    if after is None:
        return _with(fix, error=f"the variant's run gave no report ({ended})")
    counts = FixAfter(after.graph_count, after.graph_break_count, after.recompile_count)
    if after.error is not None:
        return _with(fix, after=counts, error=after.error.one_line(False))
    eq = after.equivalence
    word = after.equivalence_word
    timings = after.timings
    speedup = timings.speedup if timings is not None else None
    note = fix.note
    if timings is not None and timings.unreliable:
        note = f"{note}; speedup not to be believed: {timings.unreliable}" if note else timings.unreliable
    return _with(
        fix,
        after=counts,
        equivalence="error" if word == "n/a" else word,
        speedup=speedup,
        removed=_removed(candidate, after),
        moved_to=_moved_to(candidate, base, after),
        prints=_prints(base, after),
        state=_state(after),
        verdict=eq.verdict if eq is not None else "",
        note=note,
    )


def _with(fix: Fix, **changes: object) -> Fix:
    from dataclasses import replace

    return replace(fix, **changes)  # type: ignore[arg-type]


def _break_sites(report: Report) -> set[tuple[int, str]]:
    """Each break of the report as (line, torch's type for it)."""
    sites = {(s.line, s.gb_type) for s in report.break_sites if s.line is not None}
    return sites or {(b.line, b.gb_type or b.reason) for b in report.graph_breaks if b.line is not None}


def _moved_to(candidate: Candidate, base: Report, after: Report) -> tuple[int, ...]:
    """Lines of the variant's breaks that the run without the change did not have (a break of
    another type on the target's own line included), once the target's break is gone."""
    if not _removed(candidate, after):
        return ()
    return tuple(sorted({line for line, _ in _break_sites(after) - _break_sites(base)}))


def _removed(candidate: Candidate, after: Report) -> bool:
    target = candidate.target
    if target.kind == "break":
        return not any(
            line == target.line and (not target.what or what == target.what) for line, what in _break_sites(after)
        )
    return not any(
        r.line == target.line or (target.function and r.function == target.function) for r in after.recompiles
    )


def _prints(base: Report, after: Report) -> str:
    """What the variant printed against the run without the change (both compiled runs: with
    the break, a print runs in Python each call, as eager's does). Not compared when the run
    without the change failed (fullgraph=True refused the break): it stopped before its prints."""
    if base.error is not None:
        return ""
    before, now = base.output.text, after.output.text
    if not before and not now:
        return ""
    if before == now:
        return "same"
    return "dropped" if before and not now else "changed"


def _state(after: Report) -> str:
    """Buffers and parameters the calls changed, compiled against eager."""
    eq = after.equivalence
    if eq is None or not eq.state:
        return ""
    return "same" if all(c.ok for c in eq.state) else "differs"


def advice(rewrites: tuple[FixAdvice, ...], fixes: tuple[Fix, ...]) -> tuple[FixAdvice, ...]:
    """The targets no remedy removed outright (no break moved elsewhere) with equal values, each
    with its documented rewrite."""
    kept = {
        (f.target.kind, f.target.line)
        for f in fixes
        if f.removed and not f.moved_to and f.equivalence in ("ok", "rounding")
    }
    return tuple(a for a in rewrites if (a.target.kind, a.target.line) not in kept)
