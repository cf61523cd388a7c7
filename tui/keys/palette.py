"""The command palette, made safe for long or odd typed strings: it runs only a command the user
picked, and stays responsive however much is typed into it.

Textual's palette searches every provider and redraws its input on each key; 6,000 characters
typed key by key kept the app busy for half a minute (the input's redraw grows with its length).
And Enter could act on a list made for an earlier text: handled as a binding, it overtakes the
keys still queued for the input, and the search for the text as typed may still be running, so
the top entry of a stale list ran (Help, or Cycle dynamic: a command nobody picked).
"""

from __future__ import annotations

from textual import on
from textual.command import CommandInput, CommandPalette
from textual.widgets import Input
from textual.worker import Worker, WorkerState

#: The longest text the palette takes: a command's name, or a `KEY=VALUE` switch (torch's
#: longest config names are under 70 characters). Keys past it are refused, at no cost.
MAX_QUERY = 200


class PlaygroundPalette(CommandPalette):
    """Textual's palette, with a bounded input, and an Enter that acts only on the results of
    the text as typed (once they are in)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        #: The text of the latest search started (the palette opens on the empty one).
        self._searched = ""
        #: The text an Enter was pressed on, while its results were not in yet.
        self._enter_for: str | None = None

    def on_mount(self) -> None:
        self.query_one(CommandInput).max_length = MAX_QUERY

    @property
    def searching(self) -> bool:
        """Whether a search is still running: the list shows an earlier text's results."""
        return any(
            worker.node is self and worker.group == self._GATHER_COMMANDS_GROUP and not worker.is_finished
            for worker in self.app.workers
        )

    @on(Input.Changed)
    def _note_text(self, event: Input.Changed) -> None:
        # Runs before Textual's own handler, which starts the search for this text.
        self._searched = event.value.strip()

    @on(Input.Submitted)
    def _enter(self, event: Input.Submitted) -> None:
        # Instead of Textual's handler: decide once the keys typed before this Enter are in
        # (a callback queued on the input runs after them).
        event.stop()
        event.prevent_default()
        self.query_one(CommandInput).call_later(self._enter_typed)

    def _enter_typed(self) -> None:
        if not self.is_current:
            return  # an earlier Enter already chose, and the palette has closed
        text = self.query_one(CommandInput).value.strip()
        if text == self._searched and not self.searching:
            self._select_or_command()
        else:
            self._enter_for = text  # acted on when this text's search is done

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group != self._GATHER_COMMANDS_GROUP or event.state != WorkerState.SUCCESS:
            return
        if not self.is_current:
            return
        if self._enter_for is not None and self._enter_for == self._searched and not self.searching:
            self._enter_for = None
            self._select_or_command()
