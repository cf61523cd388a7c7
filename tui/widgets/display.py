"""Small widgets that display renderables; all content comes from the pane functions.

Panes stay pure functions of the report; the caching that keeps the UI quick sits here and in
tui/widgets/deck.py (the tab panes): `PaneView.show_for` skips a pane whose inputs did not change, and
`PaneBody` renders a body's lines once per width and style, so scrolling a pane or laying the
screen out again costs no Rich rendering at all, however long its guards or Inductor code run.
`PaneView` shows the wide layout's side panes and the history's comparison.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from rich.console import RenderableType
from rich.text import Text
from textual.containers import VerticalScroll
from textual.content import Content
from textual.css.styles import RulesMap
from textual.screen import Screen
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions, RichVisual, Visual
from textual.widget import Widget
from textual.widgets import Footer, Static

#: How many (width, style) renderings of one body are kept: the focused and unfocused
#: styles at the current width, and the side and tab widths on a wide terminal.
_KEPT = 4


class CachedRichVisual(RichVisual):
    """A Rich renderable rendered once per width and style, not on every layout.

    Textual's own `RichVisual` renders the whole renderable twice per layout (once to measure
    its height, once for its lines), and a tab switch is a layout: with hundreds of lines of
    highlighted Inductor code that is most of a keypress's latency. Here the measure and the
    lines share one rendering, kept until the pane is given new content. The tab panes'
    deck (tui/widgets/deck.py) keeps each pane's body in one too and draws from `lines`."""

    def __init__(self, widget: Widget, renderable: RenderableType) -> None:
        super().__init__(widget, renderable)
        self._lines: dict[tuple[int, Style], list[Strip]] = {}

    def lines(self, width: int, style: Style) -> list[Strip]:
        """Every line of the renderable at `width` in `style`, rendered on the first ask."""
        return self._all_lines(width, style)

    def has_lines(self, width: int, style: Style) -> bool:
        """Whether `lines(width, style)` is rendered already."""
        return (width, style) in self._lines

    def _all_lines(self, width: int, style: Style, options: RenderOptions | None = None) -> list[Strip]:
        key = (width, style)
        lines = self._lines.get(key)
        if lines is None:
            # RichVisual ignores the options (selection is for Textual's own Content).
            lines = super().render_strips(width, None, style, options)  # type: ignore[arg-type]
            if len(self._lines) >= _KEPT:
                del self._lines[next(iter(self._lines))]
            self._lines[key] = lines
        return lines

    def get_height(self, rules: RulesMap, width: int) -> int:
        # Measured with the style the lines will be drawn in, so they are drawn from cache.
        return len(self._all_lines(width, self._widget.visual_style))

    def render_strips(self, width: int, height: int | None, style: Style, options: RenderOptions) -> list[Strip]:
        lines = self._all_lines(width, style, options)
        return lines if height is None else lines[:height]


class PaneBody(Static):
    """A Static whose Rich content is rendered once per update (see `CachedRichVisual`)."""

    _cached: Visual | None = None

    # The panes hold no links; Textual would otherwise restyle every cached line (hundreds,
    # not the screenful in view) each time the pane is drawn.
    auto_links = False

    def update(self, content: RenderableType | Visual = "", *, layout: bool = True) -> None:
        # Text and plain strings become Textual Content, which is cheap and keeps Textual's
        # own handling (links, selection); everything else is wrapped and cached.
        plainly = isinstance(content, (str, Text, Content, Visual))
        self._cached = None if plainly else CachedRichVisual(self, content)
        super().update(content, layout=layout)

    def render(self) -> Visual | RenderableType:
        return self._cached if self._cached is not None else super().render()

    def rendered(self) -> list[Strip]:
        """The rows as drawn: the cached rendering at the body's width and style ([] for plain
        text, which is not cached)."""
        width = self.content_region.width
        if not isinstance(self._cached, CachedRichVisual) or width <= 0:
            return []
        return self._cached.lines(width, self.visual_style)


class Unset:
    """The key of a pane that has shown nothing yet, or something shown without a key."""


def same_key(old: object, new: object) -> bool:
    """Whether two pane keys name the same content. Frozen values (reports, views, settings)
    match by identity: a new one is a new result, even if equal, and comparing two reports
    field by field would cost what the cache saves. Strings and numbers match by value."""
    if isinstance(old, tuple) and isinstance(new, tuple):
        return len(old) == len(new) and all(same_key(a, b) for a, b in zip(old, new))
    if old is new:
        return True
    if isinstance(old, (str, int, float, bytes)) and type(old) is type(new):
        return old == new
    return False


class PaneView(VerticalScroll, can_focus=True):
    """A scrollable pane showing one renderable; focusable so arrows and PgUp/PgDn scroll it."""

    DEFAULT_CSS = """
    PaneView { padding: 0 1; scrollbar-size-vertical: 1; }
    PaneView > Static { width: 1fr; }
    """

    renders: int = 0
    """How many times a body was built and handed to the Static (the tests count them)."""

    _key: Hashable = Unset

    def compose(self):
        yield PaneBody(classes="pane-body")

    def show(self, renderable: RenderableType) -> None:
        """Show `renderable` now (no cache: the next `show_for` renders again)."""
        self._key = Unset
        self._update(renderable)

    def show_for(self, key: tuple[object, ...], build: Callable[[], RenderableType]) -> bool:
        """Show `build()` unless what is shown was built for the same `key` (see `same_key`);
        True when it rendered. `key` names every input of `build`."""
        if same_key(self._key, key):
            return False
        self._key = key
        self._update(build())
        return True

    def _update(self, renderable: RenderableType) -> None:
        self.renders += 1
        self.query_one(Static).update(renderable)

    def rendered(self) -> list[Strip]:
        """The body's rows as drawn (rendered now at the body's width if they are not)."""
        body = self.query_one(PaneBody)
        return body.rendered()


class Bar(Static):
    """A one-line bar (title, settings, summary)."""

    DEFAULT_CSS = """
    Bar { height: 1; width: 1fr; padding: 0 1; }
    """


class SteadyFooter(Footer):
    """Textual's Footer, rebuilt only when the keys it shows change.

    The stock Footer recomposes (unmounts and mounts a widget per key) whenever the focused
    widget changes, and every pane key moves the focus: that was a fixed share of each
    switch's latency for a footer that looked the same before and after."""

    _shown: tuple[object, ...] | None = None

    def bindings_changed(self, screen: Screen) -> None:
        shown = _footer_keys(screen)
        if shown == self._shown and self._bindings_ready:
            return
        if screen.app.app_focus and self.is_attached and screen is self.screen:
            # Only what was really rebuilt counts as shown (the stock footer skips an
            # unfocused app and another screen's signal).
            self._shown = shown
        super().bindings_changed(screen)


def _footer_keys(screen: Screen) -> tuple[object, ...]:
    """What the footer would draw: each shown key, its words and whether it is enabled."""
    return tuple(
        (binding.key, binding.action, binding.description, binding.key_display, enabled, tooltip)
        for _node, binding, enabled, tooltip in screen.active_bindings.values()
        if binding.show or binding.key == screen.app.COMMAND_PALETTE_BINDING
    )
