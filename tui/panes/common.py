"""Shared wording and styles. Every style has a word beside it: colour is never the only signal."""

from __future__ import annotations

from collections.abc import Iterable

from rich.text import Text

from playground.engine.report import Report
from playground.engine.wording import line as tags
from playground.engine.wording.line import Line, plural

BAD = "bold red"
WARN = "bold yellow"
GOOD = "green"
DIM = "dim"
HEADING = "bold"

#: The wording layer's tags as the panes draw them.
STYLES = {tags.BAD: BAD, tags.WARN: WARN, tags.GOOD: GOOD, tags.DIM: DIM, tags.HEADING: HEADING, tags.HINT: "italic"}


def number(value: float | None, unit: str = "") -> str:
    """A diff or a time: compact, and `n/a` rather than blank when unknown."""
    if value is None:
        return "n/a"
    if value == 0:
        return f"0{unit}"
    if abs(value) < 1e-3 or abs(value) >= 1e5:
        return f"{value:.2e}{unit}"
    return f"{value:.4g}{unit}"


def verdict(ok: bool) -> Text:
    """pass/FAIL in words, coloured."""
    return Text("pass", style=GOOD) if ok else Text("FAIL", style=BAD)


def absent(report: Report, pending: str, absent: str) -> Text:
    """What a pane says for a section the report does not have: `pending` while the run is
    still going (the report is an early stage), `absent` once it is complete without it."""
    return Text(pending if report.stage in ("traced", "findings", "diagnostics") else absent, style=DIM)


def styled(line: Line, indent: str = "") -> Text:
    """A line of words as the pane draws it, after `indent` and two spaces per depth: each
    tagged piece in its style."""
    text = Text(indent + "  " * line.depth, style=STYLES.get(line.tag, ""))
    for words, tag in line.pieces:
        text.append(words, style=STYLES.get(tag, ""))
    return text


def styled_lines(lines: Iterable[Line], indent: str = "") -> list[Text]:
    return [styled(line, indent) for line in lines]


__all__ = [
    "BAD",
    "DIM",
    "GOOD",
    "HEADING",
    "STYLES",
    "WARN",
    "absent",
    "number",
    "plural",
    "styled",
    "styled_lines",
    "verdict",
]
