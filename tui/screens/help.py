"""`?`: every key and what each pane means, built from the same table as the bindings."""

from __future__ import annotations

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from tui.keys.table import KEYS, PANE_HELP, PANES


def help_renderable() -> Group:
    keys = Table(title="Keys", title_justify="left", show_edge=False, expand=True)
    keys.add_column("key", no_wrap=True)
    keys.add_column("does", ratio=1)
    for key in KEYS:
        shown = key.key if key.id.startswith("pane-") else key.shown_key
        keys.add_row(shown, Text.assemble((key.title, "bold"), f": {key.help}"))
    keys.add_row("ctrl+p", "Command palette: every command above, searchable")
    meaning = Table(title="Panes", title_justify="left", show_edge=False, expand=True)
    meaning.add_column("pane", no_wrap=True)
    meaning.add_column("shows", ratio=1)
    for number, (pane, title) in enumerate(PANES, start=1):
        meaning.add_row(f"{number} {title}", PANE_HELP[pane])
    footer = Text(
        "The bottom line: graphs, breaks, recompiles, equivalence and speedup of the shown "
        "result, then the run state. STALE means the panes show an older result than the "
        "file and settings now on screen. Saving the file reruns it. After a rerun, the line "
        "above it says what changed since the same settings last ran, and the Breaks pane "
        "starts with the diff of the snippet; h compares any two runs, x runs every setting.",
        style="dim",
    )
    return Group(keys, Text(""), meaning, Text(""), footer)


class HelpScreen(ModalScreen[None]):
    """Dismissed by escape, q or ? again."""

    BINDINGS = [Binding("escape,q,question_mark", "dismiss", "close", tooltip="Close help", id="close-help")]

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 90%; max-width: 110; height: 90%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    """

    def compose(self) -> ComposeResult:
        with VerticalScroll() as scroll:
            scroll.border_title = "compile-playground help (escape closes)"
            yield Static(help_renderable())
