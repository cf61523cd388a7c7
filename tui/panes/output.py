"""What the snippet (or the program) printed, and the full error detail when the run failed."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from playground.engine.report import Report
from tui.panes.common import BAD, DIM, HEADING


def render_output(report: Report) -> RenderableType:
    """stdout and stderr of the snippet during the run, then the error's traceback if any."""
    output = report.output
    parts: list[RenderableType] = []
    whose = "the program" if report.kind == "program" else "the snippet"
    if output.text:
        note = f"{output.bytes} bytes" + (", truncated" if output.truncated else "")
        parts.append(Text(f"what {whose} printed ({note})", style=HEADING))
        parts.append(Text(output.text.rstrip("\n")))
    else:
        parts.append(Text(f"{whose} printed nothing", style=DIM))
    if report.error is not None:
        parts.append(Text(f"\n{report.error.one_line(report.kind == 'program')}", style=BAD))
        if report.error.detail:
            parts.append(Text(report.error.detail.rstrip("\n")))
    for note in report.notes:
        parts.append(Text(f"note: {note}", style=DIM))
    return Group(*parts)
