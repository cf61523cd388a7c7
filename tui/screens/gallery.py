"""`g`: the bundled snippets with their one-line descriptions; choosing one opens a copy."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from playground.engine.textsafe import visible
from tui.files.gallery import GalleryEntry


class GalleryScreen(ModalScreen[GalleryEntry | None]):
    """Dismisses with the chosen entry, or None on escape."""

    BINDINGS = [Binding("escape,q", "close", "close", tooltip="Close the gallery", id="close-gallery")]

    DEFAULT_CSS = """
    GalleryScreen { align: center middle; }
    GalleryScreen > Vertical {
        width: 96%; max-width: 110; height: 90%;
        border: round $accent; background: $surface;
    }
    GalleryScreen OptionList, GalleryScreen OptionList:focus { height: 1fr; border: none; }
    GalleryScreen Static { padding: 0 1; color: $text-muted; }
    """

    def __init__(self, entries: list[GalleryEntry]) -> None:
        super().__init__()
        self.entries = entries

    def compose(self) -> ComposeResult:
        with Vertical() as box:
            box.border_title = "gallery"
            if not self.entries:
                yield Static("No bundled snippets were found.")
            width = max((len(visible(e.name)) for e in self.entries), default=0)
            yield OptionList(*(self._option(i, e, width) for i, e in enumerate(self.entries)))
            yield Static("enter opens an editable copy in the current folder (never overwritten)")

    @staticmethod
    def _option(index: int, entry: GalleryEntry, width: int) -> Option:
        # A file name is drawn as it is only once its control characters are visible.
        prompt = Text.assemble((visible(entry.name).ljust(width), "bold"), "  ", entry.title)
        return Option(prompt, id=str(index))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.entries[int(event.option.id or 0)])

    def action_close(self) -> None:
        self.dismiss(None)
