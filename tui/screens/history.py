"""`h`: every complete run of this session, newest first; any two can be compared.

Above the runs, from the second run on, the figures that move across saves as sparklines,
oldest run on the left: speedup, compile time, graphs and breaks, each with its newest, lowest
and highest value written beside it (a sparkline alone says nothing on a monochrome screen).

space marks a run (two at most: a third mark replaces the oldest), enter compares the two
marked runs, or one marked run with the highlighted one, or the highlighted run with the
previous run under the same settings. The comparison is `describe` plus the snippet's diff.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Sparkline, Static
from textual.widgets.option_list import Option

from playground.engine.history import Entry, History, Trend, trends
from tui.panes.common import DIM
from tui.run.compare import BeforeAfter, render_comparison
from tui.widgets.display import PaneView


def pick_pair(history: History, marked: list[int], highlighted: int | None) -> tuple[Entry, Entry] | None:
    """Which two runs enter compares (see the module docstring); None when there is no pair."""
    chosen = [entry for number in marked if (entry := history.get(number)) is not None]
    current = history.get(highlighted) if highlighted is not None else None
    if len(chosen) == 2:
        return chosen[0], chosen[1]
    if len(chosen) == 1 and current is not None and current.number != chosen[0].number:
        return chosen[0], current
    if current is None and chosen:
        current = chosen[0]
    if current is None:
        return None
    before = history.previous_same_settings(current) or history.get(current.number - 1)
    return (before, current) if before is not None else None


class HistoryScreen(ModalScreen[None]):
    """Shows `history` as it was when opened; runs that finish meanwhile appear next time."""

    BINDINGS = [
        Binding("space", "mark", "mark", tooltip="Mark the highlighted run; enter compares the marked two", id="mark"),
        Binding("escape,q,h", "close", "close", tooltip="Close the history", id="close-history"),
    ]

    DEFAULT_CSS = """
    HistoryScreen { align: center middle; }
    HistoryScreen > Vertical {
        width: 96%; max-width: 130; height: 94%;
        border: round $accent; background: $surface;
    }
    HistoryScreen OptionList, HistoryScreen OptionList:focus { height: 1fr; border: none; }
    HistoryScreen #history-trends { height: auto; padding: 0 1; border-bottom: hkey $accent; }
    HistoryScreen #history-trends-title { color: $text-muted; }
    HistoryScreen .trend { height: auto; }
    HistoryScreen .trend-label { width: 13; }
    HistoryScreen .trend Sparkline { width: 16; margin-right: 1; }
    HistoryScreen .trend-words { width: 1fr; height: auto; }
    HistoryScreen #history-hint { padding: 0 1; color: $text-muted; }
    HistoryScreen PaneView { height: 1fr; border-top: hkey $accent; }
    """

    def __init__(self, history: History) -> None:
        super().__init__()
        self.history = history
        self.entries = list(reversed(history.entries))
        self.marked: list[int] = []

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = f"history: {len(self.entries)} runs, newest first (escape closes)"
            if len(self.entries) > 1:
                with Vertical(id="history-trends"):
                    yield Static("across the runs, oldest to newest", id="history-trends-title")
                    for trend in trends(self.history.entries):
                        yield _trend_row(trend)
            yield OptionList(*(Option(self._prompt(e), id=str(e.number)) for e in self.entries))
            yield Static(
                "space marks, enter compares two marked (or highlighted vs previous)",
                id="history-hint",
            )
            yield PaneView(id="history-compare")

    def on_mount(self) -> None:
        if not self.entries:
            self._show(Text("no complete runs yet", style=DIM))
            return
        self._compare()  # the newest run against its predecessor: usually the question

    def _prompt(self, entry: Entry) -> Text:
        mark = "[x] " if entry.number in self.marked else "[ ] "
        return Text.assemble((mark, "bold"), entry.label())

    def _highlighted(self) -> int | None:
        option = self.query_one(OptionList).highlighted_option
        if option is not None and option.id:
            return int(option.id)
        return self.entries[0].number if self.entries else None

    def action_mark(self) -> None:
        number = self._highlighted()
        if number is None:
            return
        if number in self.marked:
            self.marked.remove(number)
        else:
            self.marked = [*self.marked, number][-2:]
        options = self.query_one(OptionList)
        for entry in self.entries:
            options.replace_option_prompt(str(entry.number), self._prompt(entry))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self._compare()

    def _compare(self) -> None:
        pair = pick_pair(self.history, self.marked, self._highlighted())
        if pair is None:
            self._show(Text("the first run: nothing earlier to compare it with", style=DIM))
            return
        self._show(render_comparison(BeforeAfter.of(*pair)))

    def _show(self, renderable) -> None:
        self.query_one("#history-compare", PaneView).show(renderable)

    def action_close(self) -> None:
        self.dismiss(None)


def _trend_row(trend: Trend) -> Horizontal:
    """One figure's label, its sparkline over the runs that have it, and its numbers."""
    return Horizontal(
        Static(trend.label, classes="trend-label"),
        Sparkline(list(trend.values)),
        Static(trend.words, classes="trend-words"),
        classes="trend",
        id=f"trend-{trend.label.replace(' ', '-')}",
    )
