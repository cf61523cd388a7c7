"""Cold compile and steady-state timings. The speedup never appears without the graph and
break counts next to it (a speedup over a graph-broken target is a different claim), nor,
when it is far from 1x, without the reason the report gives for it; and the pane says what
was timed."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from playground.engine import phases
from playground.engine.report import Report, Timings
from playground.engine.speedup import (
    machine_line,
    memory_line,
    speedup_reasons,
    speedup_spread,
    speedup_word,
    unreliable_line,
)
from tui.panes.common import BAD, DIM, HEADING, WARN, number

_CACHE_WORDS = {
    "hit": "compile caches hit: this was not a cold compile",
    "miss": "compile caches missed: a true cold compile",
    "partial": "compile caches partly hit",
    "disabled": "compile caches disabled: a true cold compile",
    "n/a": "no compile caches for this backend",
}


def render_timings(report: Report) -> RenderableType:
    """Device, cold compile, eager vs compiled steady state with spread, speedup in context."""
    timings = report.timings
    if timings is None:
        if report.stage in ("traced", "diagnostics"):
            return Text("timings: pending (measured after the equivalence check)", style=DIM)
        return Text("timings: not measured in this run", style=DIM)
    parts: list[RenderableType] = [Text(f"device {timings.device}", style=HEADING)]
    compile_line = Text(f"cold compile {number(timings.compile_s, ' s')}")
    cache = _CACHE_WORDS.get(timings.compile_cache, f"compile cache: {timings.compile_cache}")
    compile_line.append(f"  ({cache})", style=DIM)
    parts.append(compile_line)
    parts += _phases(report)  # issue 12: compile time per phase
    table = Table(show_edge=False, expand=False)
    table.add_column("steady state")
    table.add_column("median", justify="right")
    table.add_column("spread (IQR)", justify="right")
    table.add_column("runs", justify="right")
    table.add_row(
        "eager",
        number(timings.eager_ms, " ms"),
        f"± {number(timings.eager_iqr_ms, ' ms')}",
        str(timings.eager_runs or "n/a"),
    )
    table.add_row(
        "compiled",
        number(timings.compiled_ms, " ms"),
        f"± {number(timings.compiled_iqr_ms, ' ms')}",
        str(timings.compiled_runs or "n/a"),
    )
    parts.append(table)
    context = Text(f"speedup {speedup_word(timings)}", style=BAD if timings.unreliable else HEADING)
    spread = speedup_spread(timings)
    if spread and not timings.unreliable:
        context.append(f" ({spread})", style=DIM)
    context.append(
        f"  with graphs {report.graph_count}  breaks {report.graph_break_count}",
        style=BAD if report.graph_break_count else "",
    )
    parts.append(context)
    if timings.unreliable:
        parts.append(Text(f"  {unreliable_line(timings)}", style=BAD))
    if machine_line(timings):
        parts.append(Text(f"  machine while timing: {machine_line(timings)}", style=DIM))
    if memory_line(report):
        parts.append(Text(f"  {memory_line(report)}", style=DIM))
    for reason in speedup_reasons(report):
        parts.append(Text(f"  why: {reason}", style=WARN))
    parts.append(Text(timed_words(report, timings), style=DIM))
    if timings.note:
        parts.append(Text(timings.note, style=DIM))
    return Group(*parts)


def timed_words(report: Report, timings: Timings) -> str:
    """What the steady-state figures measured: which call, and only its forward pass."""
    if timings.timed_call:
        of = f" of {report.calls}" if report.calls else ""
        call = f"call {timings.timed_call}{of} of inputs()"
    else:
        call = "one call of inputs()"
    # The worker times `fn(*args)` alone (playground/worker/timing.py): the gradient check's backward
    # pass is not in these figures.
    return f"timed: {call}, forward only (no backward)"


def _phases(report: Report) -> list[RenderableType]:
    """Compile time per phase, one row per frame compile, from torch's own metrics."""
    header, rows = phases.phase_table(report)
    if not rows:
        return []
    table = Table(show_edge=False, expand=False, title="compile time by phase (s)", title_justify="left")
    for i, name in enumerate(header):
        table.add_column(name, justify="left" if i == 0 else "right", overflow="fold")
    for row in rows:
        table.add_row(*row, style=HEADING if row[0] == "all" else "")
    coverage = phases.coverage_words(report)
    return [table, Text(coverage, style=DIM)] if coverage else [table]
