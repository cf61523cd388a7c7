"""Cold compile and steady-state timings. The speedup never appears without the graph and
break counts next to it (a speedup over a graph-broken target is a different claim), nor,
when it is far from 1x, without the reason the report gives for it; and the pane says what
was timed."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from playground.engine.report import Report
from playground.engine.wording import compiled, guard_what_if, phases, timings
from tui.panes.common import DIM, HEADING, absent, number, styled, styled_lines


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
    return Group(*parts, *inside)


def _compiled_code(report: Report) -> list[RenderableType]:
    """The guard what-if (when asked for), what each compile made, and where the timed call's
    time went kernel by kernel (when profiled), below the timings: the figures a reader checks
    first stay on top."""
    lines = guard_what_if.what_if_lines(report) + compiled.anatomy_lines(report) + compiled.kernel_lines(report)
    return [Text(""), *styled_lines(lines)] if lines else []


def _phases(report: Report) -> list[RenderableType]:
    """Compile time per phase, one row per frame compile, from torch's own metrics."""
    phase_table = phases.phase_table(report)
    if phase_table is None:
        return []
    table = Table(show_edge=False, expand=False, title=phases.TITLE, title_justify="left")
    for i, name in enumerate(phase_table.header):
        table.add_column(name, justify="left" if i == 0 else "right", overflow="fold")
    for row in phase_table.rows:
        table.add_row(*row)
    if phase_table.total:
        table.add_row(*phase_table.total, style=HEADING)
    return [table, Text(phase_table.coverage, style=DIM)] if phase_table.coverage else [table]
