"""The code Dynamo wrote: for each compiled frame the transformed bytecode as Python, the resume
function that continues after each graph break (with the break's line), and the guard function
each cache entry runs, as depyf decompiled them in the worker."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.text import Text

from playground.engine.report import DynamoCode, Report
from tui.panes.common import DIM, HEADING, WARN

_KIND_WORDS = {
    "transformed": "transformed code",
    "resume": "resume function",
    "guard": "guard function",
}

#: What the pane says before a run was asked for Dynamo's code.
NOT_ASKED = (
    "Dynamo's code is decompiled (by depyf) only in runs that ask for it: it costs a second run of "
    "the snippet after the report's run (about 0.4 s on a small one). Opening this pane asks for "
    "it: the next run fills it."
)
#: What it says while a run is still going: the code comes last, from that second run.
PENDING = "Dynamo's code, when this run asked for it, comes last: depyf decompiles it in a second run of the snippet."


def render_dynamo_code(report: Report) -> RenderableType:
    """Per frame: transformed code, resume function (after which break line), guard functions."""
    if report.dynamo_code is None:
        if report.stage in ("traced", "diagnostics"):
            return Text(PENDING, style=DIM)
        if report.dynamo_code_note:  # e.g. depyf is not installed: say so, not "not asked"
            return Group(Text(report.dynamo_code_note, style=WARN), Text(NOT_ASKED, style=DIM))
        return Text(NOT_ASKED, style=DIM)
    parts: list[RenderableType] = []
    if report.dynamo_code_note:
        note_style = WARN if "not installed" in report.dynamo_code_note or "failed" in report.dynamo_code_note else DIM
        parts.append(Text(report.dynamo_code_note, style=note_style))
    if not report.dynamo_code:
        parts.append(Text("no code: Dynamo compiled no frame in this run", style=DIM))
        return Group(*parts)
    parts.append(_summary(report.dynamo_code))
    for item in report.dynamo_code:
        parts.append(_heading(item))
        parts.append(Syntax(item.source.rstrip("\n"), "python", theme="ansi_dark", word_wrap=True))
    return Group(*parts)


def _summary(items: tuple[DynamoCode, ...]) -> Text:
    resumes = sorted({i.resumes_at_line for i in items if i.kind == "resume" and i.resumes_at_line})
    frames = len({i.function for i in items})
    text = Text(f"{frames} compiled frame{'s' if frames != 1 else ''}", style=HEADING)
    if resumes:
        lines = ", ".join(str(n) for n in resumes)
        text.append(f"  resume after the break at line {lines}", style=WARN)
    else:
        text.append("  no graph break: no resume function", style=DIM)
    return text


def _heading(item: DynamoCode) -> Text:
    text = Text("\n")
    text.append(_KIND_WORDS.get(item.kind, item.kind), style=HEADING)
    text.append(f"  {item.name}")
    if item.kind == "resume" and item.resumes_at_line is not None:
        text.append(f"  resumes after the break at line {item.resumes_at_line}", style=WARN)
    elif item.entry is not None and item.kind == "guard":
        text.append(f"  (cache entry {item.entry} of {item.function})", style=DIM)
    return text
