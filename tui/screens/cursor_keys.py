"""The main screen's line cursor (key `l`, the arrows): shown, moved, drawn once the queued
keys are handled, and scrolled into view. Mixed into `MainScreen` before `Screen`: it needs the
screen's `line_cursor` and `view` reactives, `deck`, `is_wide` and `_show_source`; what a line's
kernels are is `tui/widgets/line_cursor.py`."""

from __future__ import annotations

from typing import Any

from tui.widgets import line_cursor
from tui.widgets.display import PaneView


class LineCursorKeys:
    """What the line cursor's keys do on the main screen."""

    @property
    def line_cursor_focused(self: Any) -> bool:
        """The cursor is shown and its Source pane has the focus: the arrows move it. (On a
        wide screen Source is always in view; with another pane focused they scroll that.)"""
        if self.line_cursor is None:
            return False
        if self.is_wide:
            return self.focused is self.query_one("#side-source", PaneView)
        return self.deck.current == "source"

    def toggle_line_cursor(self: Any) -> None:
        """Show the line cursor (where it was last, else on the first kernel's line), or hide it."""
        if self.line_cursor is not None:
            self._cursor_home, self.line_cursor = self.line_cursor, None
            return
        view = self.view
        home = self._cursor_home or line_cursor.start(view.report, view.error)
        self.line_cursor = line_cursor.moved(home, 0, view.source)

    def move_line_cursor(self: Any, step: int) -> None:
        if self.line_cursor is not None:
            self.line_cursor = line_cursor.moved(self.line_cursor, step, self.view.source)

    _cursor_drawing = False

    def watch_line_cursor(self: Any) -> None:
        # Drawn once the keys already queued are handled: a held arrow moves the cursor many
        # lines for one drawing of the pane, which costs tens of ms (the whole snippet again).
        if self._ready and not self._cursor_drawing:
            self._cursor_drawing = True
            self.app.call_after_refresh(self._draw_cursor)

    def _draw_cursor(self: Any) -> None:
        self._cursor_drawing = False
        self._show_source(self.view)
        if self.line_cursor is not None:
            self.call_after_refresh(self._cursor_into_view)

    def _cursor_into_view(self: Any) -> None:
        """Scroll the Source pane as little as brings the cursor's line and its rows into view
        (its line first, when they are taller than the pane)."""
        line = self.line_cursor
        if line is None:
            return
        if self.is_wide:
            side = self.query_one("#side-source", PaneView)
            strips, height, top_now = side.rendered(), side.scrollable_content_region.height, side.scroll_y
            scroll = lambda top: side.scroll_to(y=top, animate=False, immediate=True)  # noqa: E731
        else:
            deck = self.deck
            if deck.current != "source":
                return
            strips, height, top_now = deck.rendered("source"), deck.scrollable_content_region.height, deck.scroll_y
            scroll = lambda top: deck.scroll_pane_to("source", top)  # noqa: E731
        block = line_cursor.rows(strips, line)
        if block is None or height <= 0:
            return
        top, bottom = block
        if top < top_now:
            scroll(top)
        elif bottom > top_now + height:
            scroll(top if bottom - top > height else bottom - height)
