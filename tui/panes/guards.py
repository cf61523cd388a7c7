"""Guards per compiled entry, with the guard whose failure caused a recompile picked out.

A recompile reason names the entry it failed against ("0/0: tensor 'x' size mismatch ..."):
the worker finds the failing guard in that entry's list (`GuardFailure.guard`,
playground/worker/capture/reasons.py).
"""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from playground.engine.report import GuardDetail, Report
from playground.engine.wording import explained
from tui.panes.common import BAD, DIM, HEADING, plural, styled_lines


def failing_guards(report: Report) -> dict[str, list[tuple[int | None, str]]]:
    """compile_id -> [(index of the failing guard in that entry or None, the failed check)], as
    the worker read the recompiles' reasons (`Recompile.failures`)."""
    found: dict[str, list[tuple[int | None, str]]] = {}
    for recompile in report.recompiles:
        for failure in recompile.failures:
            if failure.entry is None:
                continue
            failures = found.setdefault(failure.entry, [])
            if (failure.guard, failure.check) not in failures:
                failures.append((failure.guard, failure.check))
    return found


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
            # torch's guard line as logged: a report this old has no parsed guards (guard_details).
            if index in marked:
                line = Text("▶ FAILED ", style=f"{BAD} reverse")
                line.append(guard, style=BAD)
            else:
                line = Text(f"  {guard}")
            parts.append(line)
        for index, reason in failures:
            if index is None:
                parts.append(Text(f"▶ FAILED check: {reason}", style=BAD))
    return Group(*parts)


def render_guard_lines(report: Report) -> RenderableType:
    """Per entry: the user's guards that a next change can make fail first (shapes, dtypes and
    values of the calls' variables, then module attributes' values), grouped by the snippet line
    that made them where there is one; the model's structure (module types, parameter shapes)
    and torch's internal guards and bookkeeping folded into a line each. Shape symbols and
    specializations first: under dynamic shapes they are why there is a second entry."""
    ex = report.explanation
    parts: list[RenderableType] = [*styled_lines(explained.shape_lines(report))]
    for entry in ex.guards:
        title = Text(f"entry {entry.compile_id}", style=HEADING)
        if entry.function:
            title.append(f"  {entry.function}")
        parts.append(title)
        parts.extend(_entry_rows(entry.guards))
    return Group(*parts)


def _entry_rows(guards: tuple[GuardDetail, ...]) -> list[RenderableType]:
    by_line: dict[int, list[tuple[int, GuardDetail]]] = {}
    loose: list[GuardDetail] = []  # a variable's guard without a snippet line
    values: list[GuardDetail] = []  # a module attribute's value, without a line
    structure: list[GuardDetail] = []
    internal = 0
    for g in guards:
        rank = g.rank
        if g.internal:
            internal += 1
        elif g.line:
            by_line.setdefault(g.line, []).append((rank, g))
        elif rank == 0:
            loose.append(g)
        elif rank == 1:
            values.append(g)
        else:
            structure.append(g)
    # (rank of the row's most changeable guard, order, label, checks): the rows a next edit can
    # break first, each row in the snippet's line order.
    rows: list[tuple[int, float, Text, Text]] = []
    for line, ranked in by_line.items():
        ranked.sort(key=lambda pair: pair[0])
        checks = "; ".join(dict.fromkeys(_short(g) for _, g in ranked))
        rows.append((ranked[0][0], line, Text(f" line {line}:", style=HEADING), Text(checks)))
    if loose:
        checks = "; ".join(dict.fromkeys(map(_short, loose)))
        rows.append((0, float("inf"), Text(" no line:", style=DIM), Text(checks, style=DIM)))
    if values:
        rows.append((1, float("inf"), Text(" modules:", style=DIM), Text(_folded_values(values))))
    # A grid: a long line of guards wraps under its own text, not under "line 37:".
    grid = Table.grid(padding=(0, 1))
    grid.add_column(no_wrap=True)
    grid.add_column()
    for _, _, label, checks in sorted(rows, key=lambda row: (row[0], row[1])):
        grid.add_row(label, checks)
    out: list[RenderableType] = [grid]
    if structure:
        roots = ", ".join(dict.fromkeys(_root(g.arg) for g in structure if g.arg != _root(g.arg)))
        on = f" on {roots}" if roots else ""
        out.append(
            Text(f" + {plural(len(structure), 'structural guard')}{on} (module types, parameter shapes)", style=DIM)
        )
    if internal:
        out.append(
            Text(
                f" + {plural(internal, 'internal guard')} (global state, grad mode, ids, module hooks, imports)",
                style=DIM,
            )
        )
    return out


def _folded_values(values: list[GuardDetail]) -> str:
    """Module attributes' values, the same setting on many modules folded into one item
    (`.training == False ×9`), each other one by the path the snippet would write."""
    leaves = [g.leaf for g in values]
    counts: dict[str, int] = {}
    for leaf in leaves:
        if leaf:
            counts[leaf] = counts.get(leaf, 0) + 1
    items: list[str] = []
    for g, leaf in zip(values, leaves):
        if leaf and counts[leaf] > 1:
            items.append(f"…{leaf} ×{counts[leaf]}")
        else:
            items.append(_short(g))
    return "; ".join(dict.fromkeys(items))


def _root(arg: str) -> str:
    """`net.layer[0].w` -> `net`: the variable an argument's path starts from."""
    cut = min((i for i in (arg.find("."), arg.find("[")) if i >= 0), default=len(arg))
    return arg[:cut]


def _short(guard: GuardDetail) -> str:
    return guard.shown
