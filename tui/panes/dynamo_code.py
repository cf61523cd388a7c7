"""The code Dynamo wrote: for each compiled frame the transformed bytecode as Python, the resume
function that continues after each graph break (with the break's line), and the guard function
each cache entry runs, as depyf decompiled them in the worker."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.text import Text

from playground.engine.report import Report
from playground.engine.wording import dynamo_code as words
from playground.engine.wording.dynamo_code import NOT_ASKED, PENDING
from tui.panes.common import DIM, WARN, styled

__all__ = ["NOT_ASKED", "PENDING", "render_dynamo_code"]


def render_dynamo_code(report: Report) -> RenderableType:
    """Per frame: transformed code, resume function (after which break line), guard functions."""
    note = words.note_line(report)
    if report.dynamo_code is None:
        if report.world_size is not None:  # asking would not fill it: say so, not "the next run fills it"
            return Text(words.ACROSS_RANKS, style=DIM)
        if report.stage in ("traced", "findings", "diagnostics"):
            return Text(words.PENDING, style=DIM)
        if report.dynamo_code_note:  # e.g. depyf is not installed: say so, not "not asked"
            return Group(Text(report.dynamo_code_note, style=WARN), Text(words.NOT_ASKED, style=DIM))
        return Text(words.NOT_ASKED, style=DIM)
    parts: list[RenderableType] = []
    if note is not None:
        parts.append(styled(note))
    if not report.dynamo_code:
        parts.append(Text(words.NO_FRAME, style=DIM))
        return Group(*parts)
    parts.append(styled(words.summary_line(report.dynamo_code)))
    for item in report.dynamo_code:
        parts.append(Text("\n") + styled(words.heading_line(item)))
        parts.append(Syntax(item.source.rstrip("\n"), "python", theme="ansi_dark", word_wrap=True))
    return Group(*parts)
