"""Cold compile and steady-state timings. The speedup never appears without the graph and
break counts next to it (a speedup over a graph-broken target is a different claim), nor,
when it is far from 1x, without the reason the report gives for it; and the pane says what
was timed."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from playground.engine.report import KernelTime, Report
from playground.engine.wording import compiled, guard_what_if, phases, timings
from playground.engine.wording.line import Line
from tui.panes.bars import BarChart, BarRow, bar
from tui.panes.common import DIM, HEADING, absent, number, styled, styled_lines
from tui.panes.fit import Fitted, WordTable
from tui.panes.waterfall import waterfall_parts

#: The kernel bars' width: a share of the call in eighths of these cells, the figures after it.
KERNEL_BAR = 10


def render_timings(report: Report) -> RenderableType:
    """Device, cold compile, eager vs compiled steady state with spread, speedup in context."""
    t = report.timings
    inside = _compiled_code(report)
    if t is None:
        missing = absent(
            report, "timings: pending (measured after the equivalence check)", "timings: not measured in this run"
        )
        return Group(missing, *inside) if inside else missing
    parts: list[RenderableType] = [Text(f"device {t.device}", style=HEADING)]
    compile_line = Text(f"cold compile {number(t.compile_s, ' s')}")
    compile_line.append(f"  ({timings.cache_words(t)})", style=DIM)
    parts.append(compile_line)
    parts += _phases(report)
    table = Table(show_edge=False, expand=False)
    table.add_column("steady state")
    table.add_column("median", justify="right")
    table.add_column("spread (IQR)", justify="right")
    table.add_column("runs", justify="right")
    table.add_row("eager", number(t.eager_ms, " ms"), f"± {number(t.eager_iqr_ms, ' ms')}", str(t.eager_runs or "n/a"))
    table.add_row(
        "compiled", number(t.compiled_ms, " ms"), f"± {number(t.compiled_iqr_ms, ' ms')}", str(t.compiled_runs or "n/a")
    )
    parts.append(table)
    parts.append(styled(timings.speedup_line(report, t)))
    parts += styled_lines(timings.timing_notes(report, t, figure=False), indent="  ")
    parts.append(Text(timings.timed_words(report, t), style=DIM))
    if t.note:
        parts.append(Text(t.note, style=DIM))
    parts += waterfall_parts(report)
    return Group(*parts, *inside)


def _compiled_code(report: Report) -> list[RenderableType]:
    """The guard what-if (when asked for), what each compile made, and where the timed call's
    time went kernel by kernel (when profiled), below the timings: the figures a reader checks
    first stay on top."""
    lines = guard_what_if.what_if_lines(report) + compiled.anatomy_lines(report)
    parts: list[RenderableType] = styled_lines(lines)
    parts += _kernels(report)
    return [Text(""), *parts] if parts else []


def _kernels(report: Report) -> list[RenderableType]:
    """The kernels profile's lines, each kernel's after a bar of its share of the call (its
    time and share are written in the line beside it)."""
    profile = report.kernels_profile
    rows: dict[Line, KernelTime] = {}
    for kernel in profile.kernels if profile is not None else ():
        rows.setdefault(compiled.kernel_row(kernel), kernel)
    parts: list[RenderableType] = []
    for line in compiled.kernel_lines(report):
        kernel = rows.get(line)
        if kernel is None or kernel.share is None:
            parts.append(styled(line))
            continue
        grid = Table.grid(padding=(0, 1))
        grid.add_column(width=KERNEL_BAR + 2, no_wrap=True)
        grid.add_column(overflow="fold")  # only a name longer than the line folds
        grid.add_row(Text("  " + bar(kernel.share, KERNEL_BAR)), styled(Line.of(*line.pieces, tag=line.tag)))
        parts.append(grid)
    return parts


def _phases(report: Report) -> list[RenderableType]:
    """Compile time per phase from torch's own metrics: the phases of all the compiles as bars
    with their seconds and shares, then a row per frame compile (its phases too where they fit
    the width, and there is more than one compile to tell apart)."""
    phase_table = phases.phase_table(report)
    if phase_table is None:
        return []
    parts: list[RenderableType] = [Text(phases.TITLE, style=HEADING)]
    shares = phases.phase_shares(report)
    if shares:
        rows = [BarRow(s.word, s.seconds, s.share) for s in shares]
        if phase_table.total:
            rows.append(BarRow("total", phase_table.total[-2 if _first_run(phase_table) else -1], style=HEADING))
        parts.append(BarChart(rows))
    parts.append(_per_compile(phase_table))
    if phase_table.coverage:
        parts.append(Text(phase_table.coverage, style=DIM))
    return parts


def _first_run(table: phases.PhaseTable) -> bool:
    return table.header[-1] == "1st run"


def _per_compile(table: phases.PhaseTable) -> RenderableType:
    """The phase table, whole where it fits and more than one compile shares the bars;
    else its frames, calls, totals and first runs (the phases are the bars above)."""
    header = table.header
    keep = [0, 1, *range(len(header) - (2 if _first_run(table) else 1), len(header))]

    def columns(cells: tuple[str, ...], kept: list[int]) -> tuple[str, ...]:
        return tuple(cells[i] for i in kept)

    def word_table(kept: list[int]) -> WordTable:
        return WordTable(
            columns(header, kept),
            [columns(row, kept) for row in table.rows],
            justify=["left", *["right"] * (len(kept) - 1)],
            total=columns(table.total, kept) if table.total and len(table.rows) > 1 else None,
            total_style=HEADING,
        )

    lean = word_table(keep)
    if len(table.rows) == 1:
        return lean
    return Fitted(word_table(list(range(len(header)))), lean)
