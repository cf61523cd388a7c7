"""The tab panes as one widget, and their one-line tab bar.

Why not Textual's TabbedContent: a tab switch there hides one TabPane and shows another, which
is a layout of the whole screen, and moves the focus, which restyles both panes; the frame that
follows was drawn three times (the old layout with new styles, the new layout, the tab's
underline moved). Measured in a pseudo-terminal at 80x24 on a 300-line pane: 35-41 ms to the
first byte of a frame and 70-110 ms until the last, against 6-7 ms here (one frame). A switch
here is another pane's lines and scroll offset in the same widget: no widget is shown or
hidden, the focus stays, only the pane's rows and the tab bar are drawn again.

`PaneDeck` keeps, per pane, what `PaneView` keeps for one: the key its body was built from
(`show_for` skips a rebuild for the same inputs), the body's lines rendered once per width and
style, and the scroll offset the pane was left at. The scrollbar is always there (an empty
track where nothing scrolls): the body's width never depends on its height, so one rendering
per pane serves, and a switch between a short pane and a long one shows or hides no scrollbar,
which would be a layout and a second frame (measured: p95 40 ms to the end of the frames with
`overflow-y: auto`, 11 ms with `scroll`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable

from rich.console import RenderableType
from rich.text import Text
from textual import events
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.style import Style
from textual.widgets import Static

from tui.widgets.display import CachedRichVisual, Unset, same_key


class _Pane:
    """One pane's body, the key it was built from, its lines (per width and style, in a
    `CachedRichVisual`), its scroll offset."""

    def __init__(self, deck: PaneDeck) -> None:
        self.deck = deck
        self.key: Hashable = Unset
        self.body: RenderableType = ""
        self.visual = CachedRichVisual(deck, "")
        self.scroll_y = 0
        self.renders = 0

    def set_body(self, body: RenderableType) -> None:
        self.body = body
        self.visual = CachedRichVisual(self.deck, body)
        self.renders += 1


class PaneDeck(ScrollView, can_focus=True):
    """The tab panes, one shown at a time (see the module's docstring)."""

    DEFAULT_CSS = """
    PaneDeck {
        height: 1fr;
        /* The scrollbar's column, always kept, is the right margin. */
        padding: 0 0 0 1;
        overflow-x: hidden;
        overflow-y: scroll;
        scrollbar-size-vertical: 1;
    }
    """

    def __init__(self, panes: Iterable[str], *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self._panes = {pane: _Pane(self) for pane in panes}
        self.current = next(iter(self._panes))

    # --- content -----------------------------------------------------------------------------

    @property
    def renders(self) -> dict[str, int]:
        """How many times each pane's body was built and handed over (the tests count them)."""
        return {pane: state.renders for pane, state in self._panes.items()}

    def body(self, pane: str) -> RenderableType:
        """What `pane` shows (its renderable as built)."""
        return self._panes[pane].body

    def rendered(self, pane: str) -> list[Strip]:
        """`pane`'s rows as drawn at the deck's width and style (rendered now if they are not)."""
        width = self._width()
        return self._lines(pane, width, self.visual_style) if width > 0 else []

    def show_for(self, pane: str, key: tuple[object, ...], build: Callable[[], RenderableType]) -> bool:
        """Show `build()` in `pane` unless its body was built for the same `key` (`same_key`);
        True when it built. `key` names every input of `build`."""
        state = self._panes[pane]
        if same_key(state.key, key):
            return False
        state.key = key
        state.set_body(build())
        if pane == self.current:
            self._fit()
        return True

    # --- switching and scrolling -------------------------------------------------------------

    def switch(self, pane: str) -> None:
        """Show `pane` at the scroll offset it was left at."""
        if pane == self.current:
            return
        self._panes[self.current].scroll_y = round(self.scroll_y)
        self.current = pane
        self._fit(self._panes[pane].scroll_y)

    def scroll_pane_to(self, pane: str, y: int) -> None:
        """Scroll `pane` to row `y`: now when it is shown, else when it next is."""
        if pane == self.current:
            self.scroll_to(y=y, animate=False, immediate=True)
        else:
            self._panes[pane].scroll_y = max(0, y)

    def on_resize(self, event: events.Resize) -> None:
        self._fit()

    def _fit(self, scroll_y: int | None = None) -> None:
        """Size the scrollable area to the shown pane's lines, scroll to `scroll_y` (None keeps
        the offset: a resize, a new body) and draw it. The virtual size is set as Textual's own
        `_size_updated(layout=False)` sets it: a new height is a new scrollbar thumb, not a new
        layout of the screen."""
        width = self._width()
        if width <= 0:
            return
        lines = self._lines(self.current, width, self.visual_style)
        size = Size(width, len(lines))
        if size != self.virtual_size:
            self.set_reactive(PaneDeck.virtual_size, size)
            self._scroll_update(size)
        if scroll_y is not None:
            self.scroll_to(y=scroll_y, animate=False, immediate=True)
        self.refresh()

    def _width(self) -> int:
        """The body's width: the widget less its padding and the scrollbar's column."""
        return self.size.width - self.styles.gutter.width - self.styles.scrollbar_size_vertical

    # --- drawing -----------------------------------------------------------------------------

    def _lines(self, pane: str, width: int, style: Style) -> list[Strip]:
        return self._panes[pane].visual.lines(width, style)

    def render_line(self, y: int) -> Strip:
        width = self._width()
        lines = self._lines(self.current, width, self.visual_style)
        row = y + round(self.scroll_y)
        return lines[row] if 0 <= row < len(lines) else Strip.blank(width, self.visual_style.rich_style)

    def warm(self, panes: Iterable[str]) -> bool:
        """Render the first of `panes` whose lines are not rendered yet at the width and style
        they will be drawn in, ahead of its first showing; True when that took a rendering.
        One pane per call, so that the caller can yield to keypresses between them."""
        width = self._width()
        if width <= 0:
            return False
        style = self.visual_style
        for pane in panes:
            if not self._panes[pane].visual.has_lines(width, style):
                self._lines(pane, width, style)
                return True
        return False


class TabBar(Static):
    """The tabs as one line of labels, the shown one in reverse video (never colour alone).
    A click on a label posts `TabBar.Chosen`."""

    DEFAULT_CSS = """
    TabBar { height: 1; width: 1fr; }
    """

    class Chosen(Message):
        """The user clicked the tab of `pane`."""

        def __init__(self, pane: str) -> None:
            super().__init__()
            self.pane = pane

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self._labels: dict[str, str] = {}
        self._active = ""
        self._spans: list[tuple[int, int, str]] = []

    @property
    def labels(self) -> dict[str, str]:
        return dict(self._labels)

    @property
    def active(self) -> str:
        return self._active

    def set_tabs(self, labels: dict[str, str], active: str) -> None:
        """Show `labels` (pane -> label, in order) with `active` marked; redrawn only on a change."""
        if labels == self._labels and active == self._active:
            return
        self._labels, self._active = dict(labels), active
        text, spans, x = Text(no_wrap=True, overflow="ellipsis"), [], 0
        for pane, label in labels.items():
            text.append(label, style="reverse bold" if pane == active else "")
            spans.append((x, x + len(label), pane))
            text.append(" ")
            x += len(label) + 1
        self._spans = spans
        # One line whatever the labels: no layout for a new active tab.
        self.update(text, layout=False)

    def on_click(self, event: events.Click) -> None:
        for start, end, pane in self._spans:
            if start <= event.x < end:
                self.post_message(self.Chosen(pane))
                return
