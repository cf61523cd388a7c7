"""Small widgets that display renderables; all content comes from the pane functions."""

from __future__ import annotations

from rich.console import RenderableType
from textual.containers import VerticalScroll
from textual.widgets import Static


class PaneView(VerticalScroll, can_focus=True):
    """A scrollable pane showing one renderable; focusable so arrows and PgUp/PgDn scroll it."""

    DEFAULT_CSS = """
    PaneView { padding: 0 1; scrollbar-size-vertical: 1; }
    PaneView > Static { width: 1fr; }
    """

    def compose(self):
        yield Static(classes="pane-body")

    def show(self, renderable: RenderableType) -> None:
        self.query_one(Static).update(renderable)


class Bar(Static):
    """A one-line bar (title, settings, summary)."""

    DEFAULT_CSS = """
    Bar { height: 1; width: 1fr; padding: 0 1; }
    """
