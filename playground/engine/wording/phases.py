"""Compile time per phase, laid out once for every view. It reads the report's
`compile_phases` and `compile_phase_totals`."""

from __future__ import annotations

from dataclasses import dataclass

from playground.engine.report import PHASE_KEYS, CompilePhase, PhaseTotals, Report

#: Each phase's column word.
WORDS: dict[str, str] = {
    "dynamo_s": "Dynamo",
    "aot_s": "AOT/backend",
    "inductor_s": "Inductor",
    "codegen_s": "codegen",
    "compile_s": "C++/Triton",
    "other_s": "other",
}
#: The phases in the order a compile runs them, each with its column's word.
PHASES: tuple[tuple[str, str], ...] = tuple((key, WORDS[key]) for key in PHASE_KEYS)
#: The section's title, as each view heads it.
TITLE = "compile time by phase (s)"


@dataclass(frozen=True)
class PhaseTable:
    """The header, one row per frame compile, the total over them (None without one), and how
    much of the cold first call they cover ("" when not known)."""

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    total: tuple[str, ...] | None
    coverage: str

    @property
    def all_rows(self) -> tuple[tuple[str, ...], ...]:
        """The compiles' rows, then the total's."""
        return self.rows + ((self.total,) if self.total else ())


def _s(value: float) -> str:
    if 0 < value < 0.0005:
        return "<0.001"  # a graph's first run is often well under a millisecond: not nothing
    return f"{value:.3f}" if value else "-"


def _shown(report: Report) -> tuple[tuple[str, str], ...]:
    """The phases worth a column: those that took time in some compile (eager has no Inductor)."""
    shown = tuple((k, word) for k, word in PHASES if any(getattr(row, k) for row in report.compile_phases))
    return shown or PHASES[:1]


def _frame(row: CompilePhase) -> str:
    where = f" line {row.line}" if row.line else ""
    backward = " (backward)" if row.pass_ == "backward" else ""
    return f"{row.compile_id} {row.function}{where}{backward}"


def _seconds(row: CompilePhase | PhaseTotals, keys: tuple[str, ...], first_run: bool) -> tuple[str, ...]:
    cells = (*(_s(getattr(row, k)) for k in keys), _s(row.total_s))
    return cells + ((_s(row.first_run_s or 0.0),) if first_run else ())


def phase_table(report: Report) -> PhaseTable | None:
    """Seconds per phase: a row per frame compile with the call that made it, then a total
    row; None when torch reported no compile."""
    if not report.compile_phases:
        return None
    shown = _shown(report)
    keys = tuple(k for k, _ in shown)
    # The first run of each graph is measured by us, not by torch: a column after the total,
    # present only in reports that carry it (canned reports from before it existed do not).
    first_run = any(r.first_run_s is not None for r in report.compile_phases)
    header = ("compile", "call", *(word for _, word in shown), "total", *(("1st run",) if first_run else ()))
    rows = tuple((_frame(r), str(r.call or "-"), *_seconds(r, keys, first_run)) for r in report.compile_phases)
    totals = report.compile_phase_totals
    total = None if totals is None else ("all", "", *_seconds(totals, keys, first_run))
    return PhaseTable(header, rows, total, coverage_words(report))


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


@dataclass(frozen=True)
class PhaseShare:
    """One phase of all the compiles together: its column word, its seconds as the table
    writes them, and its share of the compiles' total (0 to 1)."""

    word: str
    seconds: str
    share: float


def phase_shares(report: Report) -> tuple[PhaseShare, ...]:
    """Each phase worth a column with its share of the compile time, over every compile (the
    totals, or the one compile's row where the report has no totals); () with no compile."""
    if not report.compile_phases:
        return ()
    whole: CompilePhase | PhaseTotals = report.compile_phase_totals or report.compile_phases[0]
    if report.compile_phase_totals is None and len(report.compile_phases) > 1:
        return ()
    total = whole.total_s or sum(getattr(whole, k) for k, _ in _shown(report))
    return tuple(
        PhaseShare(word, _s(getattr(whole, key)), getattr(whole, key) / total if total else 0.0)
        for key, word in _shown(report)
    )
