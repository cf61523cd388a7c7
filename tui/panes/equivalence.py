"""Eager against compiled: values, gradients and changed state in tables, each row with its
verdict (`playground.engine.wording.equivalence` words them for every view)."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from playground.engine.report import Comparison, Equivalence, Report
from playground.engine.wording import equivalence as verdicts
from tui.panes.common import BAD, DIM, GOOD, HEADING, absent, number, verdict
from tui.panes.fit import Cell, Fitted, Justify, WordTable, stacked

#: The most rows one table draws: a snippet with 10,000 calls has 10,000 comparisons, and a
#: Rich table of them took 10 s to lay out (the app frozen). The failing rows come first.
MAX_ROWS = 100


def render_equivalence(report: Report) -> RenderableType:
    """The verdict, then the value comparisons, then the gradient comparisons."""
    equivalence = report.equivalence
    if equivalence is None:
        return absent(
            report, "equivalence: pending (the check runs after the last call)", "equivalence: not checked in this run"
        )
    parts: list[RenderableType] = [_headline(equivalence)]
    parts.append(_table("values (outputs)", equivalence.outputs))
    parts.append(_table("gradients", equivalence.grads))
    if equivalence.state:
        parts.append(_table("state (buffers, parameters, module-level tensors a call changed)", equivalence.state))
    for text in verdicts.footnotes(equivalence):
        parts.append(Text(text, style=DIM))
    return Group(*parts)


def _headline(equivalence: Equivalence) -> Text:
    words = f"equivalence {verdicts.headline(equivalence)}: {verdicts.meaning(equivalence)}"
    return Text(words, style=GOOD if equivalence.ok else BAD)


def _table(title: str, rows: tuple[Comparison, ...]) -> RenderableType:
    """One row per comparison; dtype and tolerance go in the title when all rows share them,
    which keeps the table inside 80 columns."""
    if not rows:
        return Text(f"\n{title}: none", style=DIM)
    dtypes = {row.dtype for row in rows}
    tolerances = {(row.atol, row.rtol) for row in rows}
    shared = []
    if len(dtypes) == 1 and rows[0].dtype:
        shared.append(rows[0].dtype)
    if len(tolerances) == 1:
        atol, rtol = next(iter(tolerances))
        shared.append(f"tolerance atol {number(atol)} rtol {number(rtol)}")
    caption = f"{title}: {', '.join(shared)}" if shared else title
    columns = ["name", "call", "max abs", "max rel"]
    if len(dtypes) > 1:
        columns.insert(1, "dtype")
    if len(tolerances) > 1:
        columns += ["atol", "rtol"]
    columns.append("result")
    justify: list[Justify] = ["left" if column in ("name", "dtype") else "right" for column in columns]
    shown = _shown(rows)
    cells = [[_cells(row)[column] for column in columns] for row in shown]
    # The caption above, not as the table's title: a title wraps to the table's width. A name
    # too long to share a line with its figures (a real model's parameter paths) gets a line of
    # its own, its figures below it, rather than being cut or folded mid-word.
    table = Fitted(WordTable(columns, cells, justify=justify), stacked(columns, cells, justify=justify))
    parts: list[RenderableType] = [Text(f"\n{caption}", style=HEADING), table]
    if len(shown) < len(rows):
        failed = sum(not row.ok for row in rows) - sum(not row.ok for row in shown)
        more = f"… {len(rows) - len(shown)} more rows not shown"
        more += f" ({failed} of them FAIL)" if failed else " (all ok)"
        parts.append(Text(f"{more}: `check --json` lists every one", style=DIM))
    return Group(*parts)


def _cells(row: Comparison) -> dict[str, Cell]:
    """A comparison's cells by column."""
    result = Text(verdicts.result(row), style=GOOD if row.ok else BAD) if row.verdict else verdict(row.ok)
    if verdicts.detail(row):
        result = Text.assemble(result, (f" {verdicts.detail(row)}", DIM))
    return {
        "name": Text(row.name or "output", style="" if row.ok else BAD),
        "dtype": row.dtype,
        "call": str(row.call),
        "max abs": number(row.max_abs),
        "max rel": number(row.max_rel),
        "atol": number(row.atol),
        "rtol": number(row.rtol),
        "result": result,
    }


def _shown(rows: tuple[Comparison, ...]) -> list[Comparison]:
    """At most `MAX_ROWS` rows, in their order: every failing one that fits, then the first
    passing ones."""
    if len(rows) <= MAX_ROWS:
        return list(rows)
    failing = [index for index, row in enumerate(rows) if not row.ok][:MAX_ROWS]
    passing = [index for index, row in enumerate(rows) if row.ok][: MAX_ROWS - len(failing)]
    return [rows[index] for index in sorted(failing + passing)]
