"""Recompiles: how many per function, each reason, and a banner nobody can miss when Dynamo
gave up and fell back to eager."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from playground.engine.report import Report
from playground.engine.wording import explained
from tui.panes.common import BAD, DIM, GOOD, HEADING, WARN, plural, styled
from tui.panes.fit import WordTable


def limit_banner(report: Report) -> RenderableType | None:
    """'fell back to eager after N recompiles', when recompile_limit was hit: a row for the
    headline and one per function at 80 columns, so the table below stays in view; torch's hints
    follow the table (`limit_hints`)."""
    if not report.recompile_limit_hit:
        return None
    per_function = Counter(r.function for r in report.recompiles)
    functions = report.recompile_limit_functions or tuple(per_function) or ("the target",)
    limits = {limit.function: limit for limit in report.explanation.limits}
    body = Text(" RECOMPILE LIMIT HIT ", style=f"{BAD} reverse")
    body.append(" new values run uncompiled: slow, silent", style="bold")
    if any(limit.hints or limit.doc for limit in report.explanation.limits):
        body.append("; hints below", style=WARN)
    for name in functions:
        # recompile_limit_functions may carry "fn (file:line) hit ...": the bare name says it.
        bare = name.split(" ", 1)[0]
        count = per_function.get(name) or per_function.get(bare) or report.recompile_count
        line = f"{bare}: fell back to eager after {plural(count, 'recompile')}"
        limit = limits.get(name) or limits.get(bare)
        if limit is not None and limit.arg:
            line += f", used up by changes of {limit.arg}"
        body.append(f"\n{line}", style=BAD)
    return body


def limit_hints(report: Report) -> list[RenderableType]:
    """torch's hints for the recompile_limit banner, under their own heading (the banner above
    already names the function and what used the limit up)."""
    hints = [line for line in explained.limit_lines(report) if line.depth]
    if not report.recompile_limit_hit or not hints:
        return []
    # Flush left, not indented under a line: the heading says what they belong to.
    return [
        Text("\nwhat to do about the recompile limit", style=HEADING),
        *(styled(replace(h, depth=0)) for h in hints),
    ]


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
        for failure in recompile.failures:
            line = Text("  ")
            if failure.entry:
                line.append(f"entry {failure.entry} failed: ", style=WARN)
            line.append(failure.check)
            if failure.comment:
                line.append(f"  {failure.comment}", style=DIM)
            parts.append(line)
            for context in failure.context:
                parts.append(Text(f"      {context}", style=DIM))
        if not recompile.failures:
            # A report from before the worker read its reasons: torch's lines as logged.
            parts.extend(Text(f"  {reason}") for reason in recompile.reasons)
    parts.extend(limit_hints(report))
    return Group(*parts)


def _explained(report: Report) -> list[RenderableType]:
    """The recompile table, one row per recompile and argument (what the failing entry was built
    for, what arrived, the line), torch's notes under it, then which entry ran each call. A grid,
    so a long value wraps inside its column instead of under the call number at 80 columns."""
    ex = report.explanation
    functions = list(dict.fromkeys(rc.function for rc in ex.recompiles))
    title = f"{plural(report.recompile_count, 'recompile')}"
    if len(functions) == 1 and functions[0]:
        title += f" of {functions[0]}"
    rows = explained.recompile_rows(report)
    changed = tuple(row for row in rows if row.change)
    parts: list[RenderableType] = [Text(title, style=WARN)]
    if changed:
        parts[0].append("  (was: what the failed entry holds, now: what arrived)", style=WARN)
        parts.append(_recompile_table(changed, many_functions=len(functions) > 1))
    # A guard that failed with no value that changed (the backend, a global's identity): torch
    # gives no was/now, so a row of the table would be all "?" and its long guard would wrap down
    # the pane. One line each instead, cut to the width; Logs has the guard in full.
    parts.extend(_guard_line(row) for row in rows if not row.change)
    for row in rows:
        if row.note:
            parts.append(
                Text(f"{f'call {row.call} ' if row.call else ''}{row.arg or row.guard}: torch: {row.note}", style=DIM)
            )
    parts.extend(limit_hints(report))
    if ex.calls:
        parts.append(Text(f"\n{explained.CALLS_TITLE}", style=HEADING))
        calls = Table.grid(padding=(0, 1))
        calls.add_column(no_wrap=True)
        calls.add_column()
        for line in explained.call_lines(report):
            calls.add_row("", styled(line))
        parts.append(calls)
    return parts


def _guard_line(row: explained.RecompileRow) -> Text:
    """`call 3  entry 1  failed: GUARD  line 12`, on one line whatever the guard's length."""
    text = Text(no_wrap=True, overflow="ellipsis")
    if row.call:
        text.append(f"call {row.call}  ")
    if row.function:
        text.append(f"{row.function}  ")
    text.append(f"entry {row.entry}  " if row.entry else "limit  ", style=DIM)
    if row.line:
        text.append(f"line {row.line}  ", style=DIM)
    text.append("failed: ", style=WARN)
    text.append(row.guard or row.what or "?")
    return text


def _recompile_table(rows: tuple[explained.RecompileRow, ...], *, many_functions: bool) -> WordTable:
    """call, entry made, arg (or the guard when it is no `arg == value`), was, now, line,
    and the entries that failed on it: one number when there are many, so a recompile_limit run
    does not repeat every older entry on each row. Its columns never break a value: a float
    that differs in its 15th digit shows that digit, on one line."""
    header = ["call", *(["function"] if many_functions else []), "entry", "arg", "was", "now", "line", "failed"]
    styles = {"was": WARN, "now": WARN, "failed": DIM}
    cells = []
    for row in rows:
        was, now = (row.was, row.now) if row.change else ("", "failed")
        failed = " ".join(row.failed) if len(row.failed) <= 2 else f"{len(row.failed)} entries"
        line = [str(row.call or "")] + ([row.function] if many_functions else [])  # a program: no call index
        # "limit": the column is narrow at 80 columns; the limit banner above says it in full.
        line += [row.entry or "limit", row.what or "?", was or "?", now or "?", str(row.line or ""), failed]
        cells.append(line)
    return WordTable(
        header,
        cells,
        justify=["right" if column in ("call", "line") else "left" for column in header],
        styles=[styles.get(column, "") for column in header],
        rules=False,
        header_style=HEADING,
    )
