"""The raw artifact text, exactly as TORCH_LOGS prints it: no markup, no highlighting."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from playground.engine.report import Report
from tui.panes.common import DIM, HEADING

_SECTIONS = (
    ("graph_breaks", "TORCH_LOGS=graph_breaks"),
    ("recompiles", "TORCH_LOGS=recompiles"),
    ("guards", "TORCH_LOGS=guards"),
)


def render_logs(report: Report) -> RenderableType:
    """The three logs, each under its TORCH_LOGS name; empty ones say so."""
    parts: list[RenderableType] = []
    for attribute, title in _SECTIONS:
        text = getattr(report.logs, attribute)
        parts.append(Text(f"── {title} ──", style=HEADING))
        if text.strip():
            parts.append(Text(text.rstrip("\n")))
        else:
            parts.append(Text("(empty)", style=DIM))
    return Group(*parts)
