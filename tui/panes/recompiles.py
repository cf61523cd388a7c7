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
    for limit in report.explanation.limits:
        used = f", used up by {limit.arg}" if limit.arg else ""
        lines.append(f"{limit.function}: {limit.config} = {limit.limit}{used}")
    body = Text("\n".join(lines), style=BAD)
    for limit in report.explanation.limits:
        for hint in limit.hints:
            body.append(f"\nhint: {hint}", style=WARN)
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
    if report.explanation.recompiles:
        parts.extend(_explained(report))
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


def _explained(report: Report) -> list[RenderableType]:
    """One row per recompile and argument (old -> new, line), then which entry ran each call."""
    ex = report.explanation
    parts: list[RenderableType] = [
        Text(f"{plural(report.recompile_count, 'recompile')}: argument was -> now", style=WARN)
    ]
    for rc in ex.recompiles:
        entry = rc.entry or "not compiled (limit)"
        for row in rc.reasons:
            line = Text(f"call {rc.call or '?'} {rc.function} -> {entry}  ", style=HEADING)
            line.append(f"{row.arg or '?'}: ")
            if row.was or row.now:
                line.append(f"{row.was or '?'} -> {row.now or '?'}", style=WARN)
            else:
                line.append(row.guard, style=WARN)
            if row.line:
                line.append(f"  line {row.line}", style=DIM)
            if len(row.entries) > 1:
                line.append(f"  ({len(row.entries)} entries failed)", style=DIM)
            parts.append(line)
            if row.was or row.now:
                parts.append(Text(f"    guard {row.guard}", style=DIM))
            if row.note:
                parts.append(Text(f"    torch: {row.note}", style=DIM))
    if ex.calls:
        parts.append(Text("\nwhich entry ran each call", style=HEADING))
        for call in ex.calls:
            style = BAD if call.status == "eager" else GOOD if call.status == "cached" else ""
            parts.append(Text(f"  {call.summary}", style=style))
    return parts
