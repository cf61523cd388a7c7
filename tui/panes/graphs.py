"""The FX graphs handed to the backend: where each one starts and ends is where the breaks
and recompiles fell. With Inductor, the code it generated follows each graph."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.text import Text

from playground.report import Report
from tui.panes.common import DIM, HEADING, plural


def render_graphs(report: Report, *, theme: str = "ansi_dark") -> RenderableType:
    """Each graph's FX code, numbered, with its compiled entry and op count."""
    if not report.graphs:
        if report.graph_count:
            return Text(f"graphs {report.graph_count}; their code was not captured", style=DIM)
        return Text("no graphs: nothing reached the backend", style=DIM)
    parts: list[RenderableType] = [
        Text(
            f"{plural(report.graph_count, 'graph')} handed to the backend "
            f"({report.settings.backend}); breaks {report.graph_break_count}",
            style=DIM,
        )
    ]
    for graph in report.graphs:
        title = Text(f"\ngraph {graph.index}", style=HEADING)
        if graph.compile_id:
            title.append(f"  entry {graph.compile_id}")
        title.append(f"  {plural(graph.op_count, 'op')}", style=DIM)
        parts.append(title)
        parts.append(Syntax(graph.code.rstrip("\n"), "python", theme=theme, word_wrap=True))
        if graph.output_code:
            parts.append(Text("generated code:", style=DIM))
            parts.append(Syntax(graph.output_code.rstrip("\n"), "python", theme=theme, word_wrap=True))
    return Group(*parts)
