"""Compile time per phase, laid out once for every view (Timing pane, `check`'s text, the
Markdown export). Torch-free: it reads the report's `compile_phases` extension."""

from __future__ import annotations

from playground.engine.report import PHASE_KEYS, PHASE_WORDS, CompilePhase, Report


def _s(value: float) -> str:
    if 0 < value < 0.0005:
        return "<0.001"  # a graph's first run is often well under a millisecond: not nothing
    return f"{value:.3f}" if value else "-"


def _shown_keys(report: Report) -> tuple[str, ...]:
    """The phases worth a column: those that took time in some compile (eager has no Inductor)."""
    keys = tuple(k for k in PHASE_KEYS if any(getattr(row, k) for row in report.compile_phases))
    return keys or ("dynamo_s",)


def _frame(row: CompilePhase) -> str:
    where = f" line {row.line}" if row.line else ""
    backward = " (backward)" if row.pass_ == "backward" else ""
    return f"{row.compile_id} {row.function}{where}{backward}"


def phase_table(report: Report) -> tuple[list[str], list[list[str]]]:
    """Header and rows (seconds): one row per frame compile, the call that made it, then a
    total row; empty rows when torch reported no compile."""
    keys = _shown_keys(report)
    # The first run of each graph is measured by us, not by torch: a column after the total,
    # present only in reports that carry it (canned reports from before it existed do not).
    first_run = any(r.first_run_s is not None for r in report.compile_phases)
    header = ["compile", "call", *(PHASE_WORDS[k] for k in keys), "total", *(["1st run"] if first_run else [])]
    rows = [
        [_frame(r), str(r.call or "-"), *(_s(getattr(r, k)) for k in keys), _s(r.total_s)]
        + ([_s(r.first_run_s or 0.0)] if first_run else [])
        for r in report.compile_phases
    ]
    totals = report.compile_phase_totals
    if rows and totals is not None:
        rows.append(
            ["all", "", *(_s(getattr(totals, k)) for k in keys), _s(totals.total_s)]
            + ([_s(totals.first_run_s or 0.0)] if first_run else [])
        )
    return header, rows


def coverage_words(report: Report) -> str:
    """How much of the cold first call torch's compile metrics account for, and what the rest is."""
    totals, timings = report.compile_phase_totals, report.timings
    if totals is None or timings is None or not timings.compile_s or not totals.first_call_s:
        return ""
    share = totals.first_call_s / timings.compile_s
    words = (
        f"torch's compile metrics cover {share:.0%} of the cold first call ({totals.first_call_s:.3f} of "
        f"{timings.compile_s:.3f} s)"
    )
    if totals.first_call_run_s is None:
        return words + "; the rest is running it: graphs, eager code between them, guards"
    run_share = totals.first_call_run_s / timings.compile_s
    rest = max(0.0, 1.0 - share - run_share)
    return (
        f"{words}, the graphs' first runs {run_share:.0%}; "
        f"the rest ({rest:.0%}) is the snippet's own code between graphs, and guards"
    )
