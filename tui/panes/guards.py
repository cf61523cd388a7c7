"""Guards per compiled entry, with the guard whose failure caused a recompile picked out.

A recompile reason names the entry it failed against ("0/0: tensor 'x' size mismatch ..."),
so the failing guard is found in that entry's list: by the reason's own text when it is a
guard expression ("L['lr'] == 0.1"), else by the tensor it names.
"""

from __future__ import annotations

import re

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from playground.engine.explain import short_guard
from playground.engine.report import GuardDetail, Report
from tui.panes.common import BAD, DIM, HEADING, WARN, plural
from tui.panes.reasons import normalize, parse_reasons, split_comment, strip_comment

_TENSOR = re.compile(r"tensor '(?P<name>[^']+)'")


def failing_guards(report: Report) -> dict[str, list[tuple[int | None, str]]]:
    """compile_id -> [(index of the failing guard in that entry or None, the reason)]."""
    by_id = {entry.compile_id: entry.guards for entry in report.guards}
    found: dict[str, list[tuple[int | None, str]]] = {}
    for recompile in report.recompiles:
        for reason in parse_reasons(recompile.reasons):
            if reason.compile_id is None:
                continue
            guards = by_id.get(reason.compile_id, ())
            index = _find_guard(guards, reason.expression)
            failures = found.setdefault(reason.compile_id, [])
            if (index, reason.expression) not in failures:
                failures.append((index, reason.expression))
    return found


def _find_guard(guards: tuple[str, ...], expression: str) -> int | None:
    wanted = normalize(expression)
    if wanted:
        for index, guard in enumerate(guards):
            check = strip_comment(guard.split(": ", 1)[-1])
            if normalize(check) == wanted:
                return index
        for index, guard in enumerate(guards):
            if wanted in normalize(guard):
                return index
    tensor = _TENSOR.search(expression)
    if tensor:
        source = f"L['{tensor['name']}']"
        for index, guard in enumerate(guards):
            if "TENSOR_MATCH" in guard and source in guard:
                return index
        for index, guard in enumerate(guards):
            if source in guard:
                return index
    return None


def render_guards(report: Report) -> RenderableType:
    """Each entry's guards; a guard that failed later is marked FAILED with the reason."""
    if report.explanation.guards:
        return render_guard_lines(report)
    if not report.guards:
        return Text("no guards recorded (nothing was compiled)", style=DIM)
    failing = failing_guards(report)
    parts: list[RenderableType] = [
        Text(
            f"{plural(len(report.guards), 'compiled entry', 'compiled entries')}; "
            "FAILED marks the guard a later call broke (see recompiles)",
            style=DIM,
        )
    ]
    for entry in report.guards:
        failures = failing.get(entry.compile_id, [])
        title = Text(f"\nentry {entry.compile_id}", style=HEADING)
        if entry.function:
            title.append(f"  {entry.function}")
        if entry.line:
            title.append(f"  line {entry.line}", style=DIM)
        title.append(f"  {plural(len(entry.guards), 'guard')}", style=DIM)
        if failures:
            title.append("  FAILED later", style=BAD)
        parts.append(title)
        marked = {index: reason for index, reason in failures if index is not None}
        for index, guard in enumerate(entry.guards):
            check, comment = split_comment(guard)
            if index in marked:
                line = Text("▶ FAILED ", style=f"{BAD} reverse")
                line.append(check, style=BAD)
            else:
                line = Text(f"  {check}")
            if comment:
                line.append(f"  {comment}", style=DIM)
            parts.append(line)
        for index, reason in failures:
            if index is None:
                parts.append(Text(f"▶ FAILED check: {reason}", style=BAD))
    return Group(*parts)


def render_guard_lines(report: Report) -> RenderableType:
    """Per entry: the user's guards grouped by the snippet line that made them, guards on
    arguments without a line next, torch's internal ones folded into one line. Shape symbols
    and specializations first: under dynamic shapes they are why there is a second entry."""
    ex = report.explanation
    parts: list[RenderableType] = []
    for spec in ex.specializations:
        where = f" line {spec.line}" if spec.line else ""
        parts.append(Text(f"specialized {spec.source} = {spec.value} in {spec.compile_id}{where}", style=WARN))
        parts.append(Text(f"  torch: {spec.reason}", style=DIM))
    for sym in ex.symbols:
        where = f" line {sym.line}" if sym.line else ""
        parts.append(Text(f"{sym.compile_id} {sym.symbol} = {sym.source} range {sym.range}{where}"))
        for g in sym.guards:
            parts.append(Text(f"  guard {g.expr}" + (f" line {g.line}" if g.line else ""), style=DIM))
    for entry in ex.guards:
        title = Text(f"entry {entry.compile_id}", style=HEADING)
        if entry.function:
            title.append(f"  {entry.function}")
        parts.append(title)
        by_line: dict[int, list[str]] = {}
        loose: list[str] = []
        internal = 0
        for g in entry.guards:
            if g.internal:
                internal += 1
            elif g.line:
                by_line.setdefault(g.line, []).append(_short(g))
            else:
                loose.append(_short(g))
        # A grid: a long line of guards wraps under its own text, not under "line 37:".
        grid = Table.grid(padding=(0, 1))
        grid.add_column(no_wrap=True)
        grid.add_column()
        for line, checks in sorted(by_line.items()):
            grid.add_row(Text(f" line {line}:", style=HEADING), Text("; ".join(dict.fromkeys(checks))))
        if loose:
            grid.add_row(Text(" no line:", style=DIM), Text("; ".join(dict.fromkeys(loose)), style=DIM))
        parts.append(grid)
        if internal:
            parts.append(Text(f" + {plural(internal, 'internal guard')} (global state, grad mode, ids)", style=DIM))
    return Group(*parts)


def _short(guard: GuardDetail) -> str:
    return short_guard(guard.kind, guard.check, guard.arg)
