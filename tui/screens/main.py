"""The main screen: header, settings, the panes, and the summary bar, all drawn from one View.

Narrow terminals get every pane as a tab; from WIDE columns the source and the graph breaks
stand on the left and the other panes tab on the right, so the code and its diagnosis are
seen together. After a rerun, a line above the summary says what changed since the same
settings last ran, and the Breaks pane starts with that and the diff of the snippet.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Callable

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.reactive import reactive
from textual.screen import Screen

from playground.engine.report import Report
from tui import panes
from tui.keys.table import PANES, SHORT_TITLES, shown_key
from tui.panes.common import DIM, WARN
from tui.panes.graphs import clamp_graph
from tui.panes.source import first_mark
from tui.run.compare import BeforeAfter, changes_text, render_since
from tui.run.findings import refused_break
from tui.run.view import View
from tui.screens.cursor_keys import LineCursorKeys
from tui.widgets.deck import PaneDeck, TabBar
from tui.widgets.display import Bar, PaneView, SteadyFooter
from tui.widgets.summary_bar import FittedSettings, FittedSummary, ProgramToggles, title_text

#: Columns from which the source gets its own column beside the tabs.
WIDE = 120
#: The panes that leave the tabs for the left column on wide screens.
SIDE_PANES = ("source", "breaks")
#: Seconds between two hidden panes rendered ahead of a switch: one pane per idle moment, so a
#: key pressed meanwhile waits for one rendering at most.
WARM_STEP_S = 0.03

_ANALYSIS: dict[str, Callable[[Report], RenderableType]] = {
    "breaks": panes.render_breaks,
    "guards": panes.render_guards,
    "recompiles": panes.render_recompiles,
    "equivalence": panes.render_equivalence,
    "timings": panes.render_timings,
    "dynamo_code": panes.render_dynamo_code,
}
_ATTEMPT: dict[str, Callable[[Report], RenderableType]] = {
    "logs": panes.render_logs,
    "output": panes.render_output,
}


class MainScreen(LineCursorKeys, Screen[None]):
    """Shows `view`; rebuilt whole on each new value, inside one batch update."""

    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (WIDE, "-wide")]

    view: reactive[View] = reactive(View, init=False)
    """Everything on screen, as one frozen value; the app assigns a new one on each change."""

    graph: reactive[int] = reactive(0, init=False)
    """Which captured graph (0-based) the Graphs pane shows; [ and ] step it."""

    line_cursor: reactive[int | None] = reactive(None, init=False)
    """The Source pane's line cursor, 1-based (None: hidden); l shows it, the arrows move it."""

    def __init__(self) -> None:
        super().__init__()
        #: Source panes still to scroll to their anchor line once they have a size (per
        #: screen: a class-level dict would be shared by every MainScreen).
        self._pending_scroll: dict[str, int] = {}
        #: Where the line cursor was when last hidden: l brings it back there.
        self._cursor_home: int | None = None

    def compose(self) -> ComposeResult:
        yield Bar(id="title")
        yield Bar(id="settings")
        with Horizontal(id="body"):
            with Vertical(id="side"):
                for pane in SIDE_PANES:
                    yield PaneView(id=f"side-{pane}")
            with Vertical(id="tabs"):
                yield TabBar(id="tabbar")
                yield PaneDeck((pane for pane, _ in PANES), id="deck")
        yield Bar(id="changes")
        yield Bar(id="summary")
        yield SteadyFooter(compact=True)

    _ready = False

    def on_mount(self) -> None:
        # Screens are not "mounted" like widgets; this flag says the panes exist.
        self._ready = True
        if "TEXTUAL_ANIMATIONS" not in os.environ:
            # No animations unless asked for: each frame of one is a repaint that takes the CPU
            # from the next keypress (and crosses SSH).
            self.app.animation_level = "none"
        if not self.app.is_headless:
            # What was loaded to get here (Textual, Rich, Pygments, the CSS) lives as long as
            # the app: out of the garbage collector's full passes, which otherwise walked it
            # all every few keypresses (130 ms each here) for nothing to free.
            self.call_after_refresh(gc.freeze)
        self._apply_width(self.size.width)
        self.watch_view(self.view)

    def on_resize(self) -> None:
        self._apply_width(self.size.width)
        if self._pending_scroll:
            self.call_after_refresh(self._apply_scroll)

    @property
    def is_wide(self) -> bool:
        return self.size.width >= WIDE

    @property
    def deck(self) -> PaneDeck:
        """The tab panes (one widget: see tui/widgets/deck.py)."""
        return self.query_one("#deck", PaneDeck)

    def _apply_width(self, width: int) -> None:
        deck = self.deck
        if width >= WIDE and deck.current in SIDE_PANES:
            deck.switch(next(pane for pane, _ in PANES if pane not in SIDE_PANES))
        self.query_one("#tabbar", TabBar).set_tabs(tab_labels(width), deck.current)

    _anchor: tuple[int | None, str] = (None, "")

    def _follow_marks(self, view: View) -> None:
        """Scroll the source to the error or first break when those change (not on every
        update: the user's own scrolling wins until the next finding)."""
        anchor = first_mark(view.report, view.error, view.toggle_target)
        key = (anchor, view.source)
        if key == self._anchor:
            return
        self._anchor = key
        if anchor is None:
            return
        self._pending_scroll = {"side-source": anchor, "pane-source": anchor}
        self.call_after_refresh(self._apply_scroll)

    def _apply_scroll(self) -> None:
        view = self.view
        deck = self.deck
        for pane_id, anchor in list(self._pending_scroll.items()):
            if pane_id == "pane-source":
                # The deck scrolls a pane that is not shown when it next is.
                width, height = deck.scrollable_content_region.width, deck.scrollable_content_region.height
                scroll = lambda top: deck.scroll_pane_to("source", top)  # noqa: E731
            else:
                side = self.query_one(f"#{pane_id}", PaneView)
                if not side.display or not side.region.height:
                    continue  # not on screen: scrolled when it is shown
                width, height = side.scrollable_content_region.width, side.size.height
                scroll = lambda top, side=side: side.scroll_to(y=top, animate=False, immediate=True)  # noqa: E731
            if width <= 0 or height <= 0:
                continue
            rows = self._source_rows(view, anchor, width)
            # Already in view from the top: leave it; else a third of the way down, so the
            # lines leading to it stay in view.
            scroll(0 if rows + 2 < height else rows - height // 3)
            del self._pending_scroll[pane_id]

    def _source_args(self, view: View) -> tuple[bool, int | None, str]:
        """What the Source pane is drawn with besides the snippet, the report and the error:
        STALE or not, the line cursor, and how to get the kernels, said at the cursor (nothing
        when the runs already ask)."""
        ask = "" if view.passes.kernels else f"press {shown_key('kernels')}"
        return view.stale and view.report is not None, self.line_cursor, ask

    def _render_source(self, view: View, until: int | None = None) -> RenderableType:
        stale, cursor, ask = self._source_args(view)
        return panes.render_source(
            view.source, view.report, view.error, stale=stale, until=until, cursor=cursor, ask=ask
        )

    def _source_rows(self, view: View, until: int, width: int) -> int:
        """The rows the Source pane takes at `width` above line `until`: its scroll offset."""
        console = self.app.console
        return len(
            console.render_lines(self._render_source(view, until), console.options.update_width(width), pad=False)
        )

    async def on_tab_bar_chosen(self, event: TabBar.Chosen) -> None:
        # What the pane's key does (the Code tab also asks the worker for Dynamo's code).
        await self.run_action(f"app.show_pane({event.pane!r})")

    def fixes_kind(self) -> str | None:
        """What `F` tries fixes for here: "break" on the Breaks pane (the deck's, or the side
        one with the focus), "recompile" on the Recomp pane, else None."""
        pane = self.deck.current
        if self.is_wide and self.focused is not None and self.focused.id == "side-breaks":
            pane = "breaks"
        return {"breaks": "break", "recompiles": "recompile"}.get(pane)

    def show_pane(self, pane: str) -> None:
        """Bring `pane` into view (on wide screens the side panes are always in view: focus)."""
        if pane in SIDE_PANES and self.is_wide:
            self.query_one(f"#side-{pane}", PaneView).focus()
            return
        deck = self.deck
        deck.switch(pane)
        self.query_one("#tabbar", TabBar).set_tabs(tab_labels(self.size.width), pane)
        if self.focused is not deck:
            deck.focus()
        self._warm_later()

    _warming = False

    def _warm_later(self) -> None:
        """Render the hidden tabs' bodies ahead of their first showing, once per report: the
        first switch to a heavy pane (Logs, Recomp, Guards on a large report) then costs what a
        switch back costs. Needs a focused tab pane to copy the width and style from."""
        if not self._warming:
            self._warming = True
            self.set_timer(WARM_STEP_S, self._warm_next)

    def _warm_next(self) -> None:
        self._warming = False
        deck = self.deck
        if self.focused is not deck:
            return  # drawn in another style than the one to warm
        shown = [pane for pane, _ in PANES if not (pane in SIDE_PANES and self.is_wide)]
        if deck.warm(shown):
            self._warm_later()  # the next one at the next idle moment

    def step_graph(self, step: int) -> None:
        """Show the previous or next captured graph, bringing the Graphs pane into view."""
        self.show_pane("graphs")
        self.graph = clamp_graph(self.view.report, self.graph + step)
        # Each graph's code starts at the top: the old scroll position means nothing in it.
        self.deck.scroll_pane_to("graphs", 0)

    def watch_graph(self) -> None:
        if self._ready:
            self._show_graphs(self.view)

    def _show_source(self, view: View) -> None:
        key = ("source", view.source, view.report, view.attempt, *self._source_args(view))
        source = _Once(lambda: self._render_source(view))
        self.query_one("#side-source", PaneView).show_for(key, source)
        self.deck.show_for("source", key, source)

    def _show_graphs(self, view: View) -> None:
        self.graph = clamp_graph(view.report, self.graph)
        selected = self.graph
        render = lambda report: panes.render_graphs(report, selected=selected)  # noqa: E731
        key = ("graphs", selected, *_frame_key(view, view.report))
        self.deck.show_for("graphs", key, lambda: _framed(view, view.report, render))

    def watch_view(self, view: View) -> None:
        if not self._ready:
            return
        with self.app.batch_update():
            self.query_one("#title", Bar).update(title_text(view))
            used = view.report.settings if view.report and not view.stale else None
            program = ProgramToggles(view.toggled, view.toggle_target) if view.program else None
            bar = FittedSettings(view.settings, used, passes=view.passes, program=program)
            self.query_one("#settings", Bar).update(bar)
            summary = self.query_one("#summary", Bar)
            summary.update(FittedSummary(view))
            summary.set_class(view.run.kind == "error", "-error")
            summary.set_class(view.stale, "-stale")
            changes = self.query_one("#changes", Bar)
            changes.set_class(view.since is not None, "-shown")
            if view.since is not None:
                changes.update(changes_text(view.since))
            # Each pane is rebuilt only when what it is built from changed (`PaneView.show_for`):
            # progress updates during a compile republish the view many times a second.
            self._show_source(view)
            self._follow_marks(view)
            for pane, render in _ANALYSIS.items():
                since = view.since if pane == "breaks" and not view.stale else None
                key = (pane, render, since, *_frame_key(view, view.report))
                body = _Once(lambda render=render, since=since: _analysis_body(view, render, since))
                self.deck.show_for(pane, key, body)
                if pane in SIDE_PANES:
                    self.query_one(f"#side-{pane}", PaneView).show_for(key, body)
            self._show_graphs(view)
            shown = view.attempt or view.report
            for pane, render in _ATTEMPT.items():
                key = (pane, render, *_frame_key(view, shown))
                self.deck.show_for(pane, key, lambda shown=shown, render=render: _framed(view, shown, render))
        self._warm_later()


def tab_labels(width: int) -> dict[str, str]:
    """pane -> its tab label at a screen `width`: the full titles where every shown tab fits
    the tab bar, else the short ones, so that no tab scrolls out of sight (all ten fit 80)."""
    shown = [(n, pane, title) for n, (pane, title) in enumerate(PANES, start=1)]
    if width >= WIDE:
        shown = [item for item in shown if item[1] not in SIDE_PANES]
        room = width // 2 - 1  # the tabs' half, less the side column's border
    else:
        room = width
    # Full titles, the short ones, then three letters (the wide layout's half at 120 columns).
    for level in range(3):
        labels = {pane: f"{n % 10} {_title(pane, title, level)}" for n, pane, title in shown}
        # Each tab is its label and a one-column gap (app.tcss).
        if sum(len(label) + 1 for label in labels.values()) <= room:
            break
    return labels


def _title(pane: str, title: str, level: int) -> str:
    """A pane's title at a shortening `level`: 0 whole, 1 short (keys.SHORT_TITLES), 2 three letters."""
    if level == 0:
        return title
    short = SHORT_TITLES.get(pane, title)
    return short if level == 1 else short[:3]


class _Once:
    """A body built at most once, for the two views (side and tab) that show the same pane."""

    def __init__(self, build: Callable[[], RenderableType]) -> None:
        self._build = build
        self._built: RenderableType | None = None

    def __call__(self) -> RenderableType:
        if self._built is None:
            self._built = self._build()
        return self._built


def _analysis_body(view: View, render: Callable[[Report], RenderableType], since: BeforeAfter | None) -> RenderableType:
    body = _framed(view, view.report, render)
    if since is not None:
        # Only over the result it describes: a STALE pane shows an older run.
        body = Group(render_since(since), body)
    return body


def _frame_key(view: View, report: Report | None) -> tuple[object, ...]:
    """Everything `_framed` reads besides the pane's own function: the report itself (by
    identity) and the words above it."""
    if report is None:
        return (None, view.run.words())
    return (report, report is view.attempt, _stale_words(view))


def _framed(view: View, report: Report | None, render: Callable[[Report], RenderableType]) -> RenderableType:
    """The pane body, under a STALE line when it does not describe the current file."""
    if report is None:
        return Text(f"no result yet: {view.run.words()}", style=DIM)
    body = render(report)
    # A fullgraph refusal is a result, not a failure: its panes need no warning.
    if report is view.attempt and report.error is not None and refused_break(report) is None:
        return Group(Text("from the newest run, which failed", style=WARN), body)
    why = _stale_words(view)
    return Group(Text(why, style=f"{WARN} reverse"), body) if why else body


def _stale_words(view: View) -> str:
    """The STALE line over a pane, or "" when the report is the current one."""
    if not view.stale:
        return ""
    if view.error is not None:
        return "STALE: the last good result; the newest run failed (see Source or Output)"
    if view.run.kind in ("running", "queued"):
        return "STALE: from before the latest change; rerunning…"
    return "STALE: from an earlier version of the file or settings"
