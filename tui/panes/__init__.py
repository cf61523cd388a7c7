"""Each pane is a pure function from a `Report` (and the snippet text where needed) to Rich
renderables, so it is tested without an app and reused by the screenshot script."""

from __future__ import annotations

from tui.panes.breaks import render_breaks
from tui.panes.dynamo_code import render_dynamo_code
from tui.panes.equivalence import render_equivalence
from tui.panes.graphs import render_graphs
from tui.panes.guards import render_guards
from tui.panes.logs import render_logs
from tui.panes.output import render_output
from tui.panes.recompiles import render_recompiles
from tui.panes.source import render_source
from tui.panes.timings import render_timings

__all__ = [
    "render_breaks",
    "render_dynamo_code",
    "render_equivalence",
    "render_graphs",
    "render_guards",
    "render_logs",
    "render_output",
    "render_recompiles",
    "render_source",
    "render_timings",
]
