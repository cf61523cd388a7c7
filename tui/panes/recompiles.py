"""Recompiles: how many per function, each reason, and a banner nobody can miss when Dynamo
gave up and fell back to eager."""

from __future__ import annotations

from collections import Counter

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.text import Text

from playground.report import Report
from tui.panes.common import BAD, DIM, GOOD, HEADING, WARN, plural
from tui.panes.reasons import parse_reasons, split_comment


def limit_banner(report: Report) -> RenderableType | None:
    """'fell back to eager after N recompiles', when recompile_limit was hit."""
    if not report.recompile_limit_hit:
        return None
    per_function = Counter(r.function for r in report.recompiles)
    functions = report.recompile_limit_functions or tuple(per_function) or ("the target",)
    lines = []
    for name in functions:
        count = per_function.get(name) or report.recompile_count
        lines.append(f"{name}: fell back to eager after {plural(count, 'recompile')}")
    body = Text("\n".join(lines), style=BAD)
    body.append(
        "\nrecompile_limit was hit: new values now run uncompiled (slow, and silent without this pane).",
        style="bold",
    )
    return Panel(body, title="RECOMPILE LIMIT HIT", border_style=BAD, title_align="left")


def render_recompiles(report: Report) -> RenderableType:
    """The banner if any, the per-function counts, then every recompile and its reasons."""
    parts: list[RenderableType] = []
    banner = limit_banner(report)
    if banner is not None:
        parts.append(banner)
    if not report.recompiles:
        parts.append(Text("no recompiles: every call reused a compiled entry", style=GOOD))
        return Group(*parts)
    parts.append(Text(f"{plural(report.recompile_count, 'recompile')}", style=WARN))
    for name, count in Counter(r.function for r in report.recompiles).items():
        parts.append(Text(f"  {name or '(unknown function)'}: {count}"))
    for recompile in report.recompiles:
        made = f"new entry {recompile.compile_id}" if recompile.compile_id else "no new entry"
        title = Text(f"\nrecompile of {recompile.function or '?'}", style=HEADING)
        title.append(f"  {made}")
        if recompile.line:
            title.append(f"  line {recompile.line}", style=DIM)
        parts.append(title)
        for reason in parse_reasons(recompile.reasons):
            line = Text("  ")
            if reason.compile_id:
                line.append(f"entry {reason.compile_id} failed: ", style=WARN)
            check, comment = split_comment(reason.text)
            line.append(check)
            if comment:
                line.append(f"  {comment}", style=DIM)
            parts.append(line)
            for context in reason.context:
                parts.append(Text(f"      {context}", style=DIM))
    return Group(*parts)
