"""`x`: the settings matrix. The snippet runs under every fullgraph x dynamic x backend on the
app's warm engine, and each row fills in as its run finishes, so "which settings forbid or
allow the failure I am looking at" is answered at a glance.

The app lends the engine (and the lock normal runs wait on) for as long as this screen runs;
escape cancels through the engine and keeps the finished rows; closing reruns the normal view.

`l` runs the ablation ladder instead (eager -> aot_eager -> aot_eager_decomp_partition ->
inductor, under the app's settings) and names the first stage that stops agreeing with eager.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static
from textual.worker import Worker, WorkerState

from playground.engine.errors import RunCancelled
from playground.engine.matrix import Cell, run_matrix
from playground.engine.settings import Settings
from tui.engine.protocol import Engine
from tui.screens.matrix_run import RAISED_WIDTH, MatrixRun
from tui.widgets.display import Bar


class MatrixScreen(Screen[None]):
    """Runs `cells` on `engine` while holding `lock` (the app's engine lock)."""

    BINDINGS = [
        Binding("escape", "stop", "cancel", tooltip="Cancel the matrix; finished rows stay", id="matrix-cancel"),
        Binding("escape,q", "close", "close", tooltip="Close and rerun the current settings", id="matrix-close"),
        Binding(
            "l",
            "ladder",
            "ladder",
            tooltip="Ablation ladder: eager, aot_eager, aot_eager_decomp_partition, inductor; the first that diverges",
            id="matrix-ladder",
        ),
    ]

    DEFAULT_CSS = """
    MatrixScreen #matrix-title { background: $primary 30%; text-style: bold; }
    MatrixScreen #matrix-state { background: $boost; text-style: bold; }
    MatrixScreen DataTable { height: auto; max-height: 1fr; }
    MatrixScreen #matrix-detail { height: auto; padding: 0 1; }
    MatrixScreen #matrix-verdict { height: auto; padding: 0 1; text-style: bold; }
    MatrixScreen #matrix-hint { height: auto; padding: 0 1; color: $text-muted; }
    """

    @dataclass
    class CellStarted(Message):
        """Cell `index` was sent to the engine."""

        index: int

    @dataclass
    class CellFinished(Message):
        index: int
        cell: Cell

    @dataclass
    class Ended(Message):
        """No more cells will run: all done, or cancelled."""

        cancelled: bool
        seconds: float

    def __init__(
        self,
        engine: Engine,
        lock: asyncio.Lock,
        path: Path,
        cells: list[Settings],
        *,
        clock: Callable[[], float] = time.monotonic,
        base: Settings | None = None,
    ) -> None:
        super().__init__()
        self.engine = engine
        self.lock = lock
        self.clock = clock
        #: The rows: their settings, states and results (what the table draws).
        self.matrix = MatrixRun(path, cells, base=base)
        self.running = True
        self._stopping = False

    def compose(self) -> ComposeResult:
        yield Bar(self.matrix.title(), id="matrix-title")
        yield Bar("waiting for the engine…", id="matrix-state")
        yield DataTable(cursor_type="row", cell_padding=0, zebra_stripes=False)
        yield Static(id="matrix-detail")
        yield Static(id="matrix-verdict")
        yield Static(self.matrix.hint(), id="matrix-hint")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        self._fill_table()
        self.query_one(DataTable).focus()
        self.run_cells()

    def _fill_table(self) -> None:
        table = self.query_one(DataTable)
        for key, header in self.matrix.headers():
            # The raised column's width is fixed: grown by its state words ("running…") only
            # when a frame happened to show them, it made the table's width depend on timing.
            table.add_column(header, key=key, width=RAISED_WIDTH + 1 if key == "raised" else None)
        for index in range(len(self.matrix.cells)):
            table.add_row(*self.matrix.row(index).values(), key=str(index))

    def _show_verdict(self) -> None:
        verdict = self.matrix.verdict()
        if verdict is not None:
            self.query_one("#matrix-verdict", Static).update(verdict)

    def action_ladder(self) -> None:
        """Run the ladder under the matrix's base settings (its other switches kept)."""
        self.matrix = self.matrix.as_ladder()
        self.running, self._stopping = True, False
        self.query_one(DataTable).clear(columns=True)
        self._fill_table()
        self.query_one("#matrix-title", Bar).update(self.matrix.title())
        self.query_one("#matrix-hint", Static).update(self.matrix.hint())
        self._show_verdict()
        self.refresh_bindings()
        self.run_cells()

    def _refresh_row(self, index: int) -> None:
        table = self.query_one(DataTable)
        for key, value in self.matrix.row(index).items():
            table.update_cell(str(index), key, value, update_width=key == "max_abs")
        if table.cursor_row == index:
            self._show_detail(index)

    def _set_state(self, text: str) -> None:
        self.query_one("#matrix-state", Bar).update(text)

    def _show_detail(self, index: int) -> None:
        detail = self.matrix.detail(index)
        if detail is not None:
            self.query_one("#matrix-detail", Static).update(detail)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail(event.cursor_row)

    @work(exclusive=True, group="matrix", exit_on_error=False)
    async def run_cells(self) -> None:
        """Posts a message per cell; the screen's handlers update the table."""
        async with self.lock:
            started = self.clock()
            if self._stopping:
                self.post_message(self.Ended(True, 0.0))
                return

            path, cells = str(self.matrix.path), self.matrix.cells
            # run_matrix is written against WorkerClient; the app's engine has the same API.
            results = run_matrix(self.engine, path, cells, on_progress=self._started)  # type: ignore[arg-type]
            # The real client's cancel ends run_matrix quietly; another engine may raise.
            with contextlib.suppress(RunCancelled):
                async with contextlib.aclosing(results):
                    async for index, cell in results:
                        self.post_message(self.CellFinished(index, cell))
                        if self._stopping:
                            break  # a cancel that landed between two cells
            self.post_message(self.Ended(self._stopping, self.clock() - started))

    def _started(self, index: int, total: int, settings: Settings) -> None:
        self.post_message(self.CellStarted(index))

    def on_matrix_screen_cell_started(self, message: CellStarted) -> None:
        if not self._stopping:
            words = self.matrix.started(message.index)
            self._refresh_row(message.index)
            self._set_state(words)

    def on_matrix_screen_cell_finished(self, message: CellFinished) -> None:
        self.matrix.finished(message.index, message.cell)
        self._refresh_row(message.index)
        self._show_verdict()

    def on_matrix_screen_ended(self, message: Ended) -> None:
        self.running = False
        unfinished, words = self.matrix.ended(message.cancelled, message.seconds)
        for index in unfinished:
            self._refresh_row(index)
        self._set_state(words)
        self.refresh_bindings()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        # An engine failure ends the matrix with its reason on screen, not a crash of the app.
        if event.worker.group == "matrix" and event.state == WorkerState.ERROR and self.running:
            self.running = False
            self._set_state(f"stopped: {type(event.worker.error).__name__}: {event.worker.error}; escape closes")
            self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # One key, two meanings: escape cancels while cells run, and closes afterwards.
        if action == "stop":
            return self.running and not self._stopping
        if action == "close":
            return not self.running
        if action == "ladder":
            # Offered once the matrix is over; the ladder's own run cannot be restarted mid-way.
            return not self.running and not self.matrix.ladder
        return True

    def action_stop(self) -> None:
        self._stopping = True
        self._set_state("cancelling: stopping the run in the worker…")
        self.refresh_bindings()
        self.cancel_engine()

    @work(exclusive=True, group="matrix-stop", exit_on_error=False)
    async def cancel_engine(self) -> None:
        # Repeated until the matrix stops: a cancel that lands between two runs is a no-op.
        while self.running:
            await self.engine.cancel()
            await asyncio.sleep(0.05)

    def action_close(self) -> None:
        self.dismiss(None)
