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
from dataclasses import dataclass, replace
from pathlib import Path

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static
from textual.worker import Worker, WorkerState

from playground.engine.errors import RunCancelled
from playground.engine.matrix import Cell, ladder_stages, ladder_summary, phase_split_words, run_matrix
from playground.engine.settings import Settings, dynamic_name
from playground.engine.textsafe import visible
from tui.engine import Engine
from tui.panes.common import BAD, DIM, GOOD, WARN
from tui.widgets import Bar

#: (key, header, right-aligned). Short headers: eleven columns must fit 80 terminal columns.
COLUMNS: tuple[tuple[str, str, bool], ...] = (
    ("backend", "backend", False),
    ("fg", "fg", False),
    ("dyn", "dyn", False),
    ("graphs", "graphs", True),
    ("breaks", "breaks", True),
    ("recomp", "recomp", True),
    ("limit", "limit", False),
    ("equiv", "equiv", False),
    ("compile", "compile", True),
    ("speedup", "speedup", True),
    ("raised", "raised", False),
)
#: The ladder's columns: fullgraph and dynamic are the same on every stage (in the title), the
#: stage name is long; what tells the stages apart is equivalence, the difference and where the
#: compile time goes. Seven columns fit 80 terminal columns.
LADDER_COLUMNS: tuple[tuple[str, str, bool], ...] = (
    ("backend", "stage", False),
    ("graphs", "graphs", True),
    ("equiv", "equiv", False),
    ("max_abs", "max abs", True),
    ("dynamo", "Dynamo", True),
    ("backend_s", "backend", True),
    ("raised", "raised", False),
)
#: The raised column shows the exception's first words (its type, when the whole does not
#: fit); the line under the table has it all. 11: the eleven columns then fill 80 exactly.
RAISED_WIDTH = 11


def stage_name(settings: Settings) -> str:
    """The backend, with the inductor mode when one is set: a ladder stage's name."""
    return (
        f"{settings.backend} {settings.mode}" if settings.mode and settings.backend == "inductor" else settings.backend
    )


def cell_label(settings: Settings) -> str:
    """ "inductor fullgraph=on dynamic=false": the part of the settings the matrix varies."""
    return (
        f"{settings.backend} fullgraph={'on' if settings.fullgraph else 'off'} dynamic={dynamic_name(settings.dynamic)}"
    )


def _padded(value: str, right: bool, style: str = "") -> Text:
    # No cell padding in the table (it would cost 22 columns): one leading space separates.
    return Text(f" {value}", style=style, justify="right" if right else "left", no_wrap=True)


def _seconds(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.1f}s" if value >= 10 else f"{value:.2f}s"


def _first_words(raised: str, width: int = RAISED_WIDTH) -> str:
    if len(raised) <= width:
        return raised
    kind = raised.split(":", 1)[0]
    return kind if len(kind) <= width else kind[: width - 1] + "…"


def ladder_row_cells(settings: Settings, cell: Cell | None, state: str) -> dict[str, Text]:
    """One ladder row (LADDER_COLUMNS); unfinished rows carry their state as row_cells does."""
    values = {"backend": _padded(stage_name(settings), False)}
    if cell is None:
        blank = {key: _padded("", right) for key, _, right in LADDER_COLUMNS if key not in values}
        return values | blank | {"raised": _padded(state, False, DIM if state == "waiting" else WARN)}
    size = "" if cell.max_abs is None else f"{cell.max_abs:.3g}"
    return values | {
        "graphs": _padded(str(cell.graphs), True),
        "equiv": _padded(cell.equivalence, False, BAD if cell.equivalence == "FAIL" else ""),
        "max_abs": _padded(size, True, BAD if cell.diverged else ""),
        "dynamo": _padded(_seconds(cell.dynamo_s), True),
        "backend_s": _padded(_seconds(cell.backend_s), True),
        "raised": _padded(_first_words(cell.raised) if cell.raised else "no", False, BAD if cell.raised else GOOD),
    }


def row_cells(settings: Settings, cell: Cell | None, state: str) -> dict[str, Text]:
    """One table row. Unfinished rows carry their state (waiting, running…, not run) in words
    in the raised column: the other result columns stay blank until there is a result."""
    values = {
        "backend": _padded(stage_name(settings), False),
        "fg": _padded("on" if settings.fullgraph else "off", False),
        "dyn": _padded(dynamic_name(settings.dynamic), False),
    }
    if cell is None:
        blank = {key: _padded("", right) for key, _, right in COLUMNS if key not in values}
        return values | blank | {"raised": _padded(state, False, DIM if state == "waiting" else WARN)}
    speedup = "n/a" if cell.speedup is None else f"{cell.speedup:.2f}x"
    return values | {
        "graphs": _padded(str(cell.graphs), True),
        "breaks": _padded(str(cell.breaks), True, WARN if cell.breaks else ""),
        "recomp": _padded(str(cell.recompiles), True, WARN if cell.recompiles else ""),
        "limit": _padded("HIT" if cell.limit_hit else "no", False, BAD if cell.limit_hit else ""),
        "equiv": _padded(cell.equivalence, False, BAD if cell.equivalence == "FAIL" else ""),
        "compile": _padded(_seconds(cell.compile_s), True),
        "speedup": _padded(speedup, True),
        "raised": _padded(_first_words(cell.raised) if cell.raised else "no", False, BAD if cell.raised else GOOD),
    }


def detail_text(settings: Settings, cell: Cell | None, state: str) -> Text:
    """The highlighted row in full sentences: the table's columns are cut to fit 80."""
    text = Text(f"{cell_label(settings)}: ", style="bold")
    if cell is None:
        text.append(state)
        return text
    if cell.raised:
        kind = f" ({cell.error_kind} error)" if cell.error_kind else ""
        text.append(f"raised{kind} {cell.raised}", style=BAD)
        return text
    if cell.diverged:
        size = "" if cell.max_abs is None else f" (max abs {cell.max_abs:.3g}, rel {cell.max_rel or 0:.3g})"
        text.append(f"{cell.diverged} differ from eager{size}  ", style=BAD)
    text.append(
        f"graphs {cell.graphs}  breaks {cell.breaks}  recompiles {cell.recompiles}  "
        f"recompile limit {'HIT' if cell.limit_hit else 'not hit'}  equiv {cell.equivalence}  "
        f"compile {_seconds(cell.compile_s)}{_phase_words(cell)}  speedup "
        + ("n/a" if cell.speedup is None else f"{cell.speedup:.2f}x")
    )
    return text


def _phase_words(cell: Cell) -> str:
    """(Dynamo 0.19s, backend 1.84s)": the compile time by phase, from torch's metrics."""
    if not phase_split_words(cell):
        return ""
    return f" (Dynamo {_seconds(cell.dynamo_s)}, backend {_seconds(cell.backend_s)})"


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
        ladder: bool = False,
        base: Settings | None = None,
    ) -> None:
        super().__init__()
        #: The app's settings: the ladder runs under them (the matrix's first cell has its own
        #: fullgraph and dynamic, not the snippet's).
        self.base = base
        #: Whether the rows are the ablation ladder's stages rather than the matrix's cells.
        self.ladder = ladder
        self.engine = engine
        self.lock = lock
        self.path = path
        self.cells = cells
        self.clock = clock
        self.results: dict[int, Cell] = {}
        self.states = ["waiting"] * len(cells)
        self.running = True
        self._stopping = False

    def _title(self) -> str:
        base = (self.base if self.ladder else None) or (self.cells[0] if self.cells else Settings())
        if self.ladder:
            title = f"ablation ladder: {self.path.name}  {len(self.cells)} stages on {base.device}"
            title += f", fullgraph={'on' if base.fullgraph else 'off'} dynamic={dynamic_name(base.dynamic)}"
        else:
            title = f"settings matrix: {self.path.name}  {len(self.cells)} runs on {base.device}"
            if any(s.backend == "inductor" for s in self.cells):
                title += f", inductor mode {base.mode or 'default'}"
        switches = base.switch_words()
        return title + (f"  {' '.join(switches)}" if switches else "")

    def compose(self) -> ComposeResult:
        yield Bar(self._title(), id="matrix-title")
        yield Bar("waiting for the engine…", id="matrix-state")
        yield DataTable(cursor_type="row", cell_padding=0, zebra_stripes=False)
        yield Static(id="matrix-detail")
        yield Static(id="matrix-verdict")
        yield Static(self._hint(), id="matrix-hint")
        yield Footer(compact=True)

    def _hint(self) -> str:
        if self.ladder:
            return (
                "equiv eager vs compiled (under the snippet's TOLERANCE), max abs the largest difference, "
                "Dynamo/backend compile seconds by phase; the highlighted row is spelled out above"
            )
        return (
            "fg fullgraph, dyn dynamic, recomp recompiles, limit recompile limit hit, equiv eager "
            "vs compiled; the highlighted row is spelled out above"
        )

    def _add_columns(self) -> None:
        table = self.query_one(DataTable)
        for key, header, right in LADDER_COLUMNS if self.ladder else COLUMNS:
            table.add_column(_padded(header, right, "bold"), key=key)

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        self._add_columns()
        self._fill_rows()
        table.focus()
        self.run_cells()

    def _fill_rows(self) -> None:
        table = self.query_one(DataTable)
        for index in range(len(self.cells)):
            table.add_row(*self._row(index).values(), key=str(index))

    def _show_verdict(self) -> None:
        if not self.ladder:
            return
        done = [self.results[i] for i in sorted(self.results)]
        verdict = ladder_summary(done, len(self.cells))
        style = BAD if verdict.startswith("first divergence") else GOOD if done else DIM
        self.query_one("#matrix-verdict", Static).update(Text(verdict, style=style))

    def action_ladder(self) -> None:
        """Run the ladder under the matrix's base settings (its other switches kept)."""
        base = self.base or (self.cells[0] if self.cells else Settings())
        self.ladder = True
        self.cells = ladder_stages(base)
        self.results = {}
        self.states = ["waiting"] * len(self.cells)
        self.running, self._stopping = True, False
        table = self.query_one(DataTable)
        table.clear(columns=True)
        self._add_columns()
        self._fill_rows()
        self.query_one("#matrix-title", Bar).update(self._title())
        self.query_one("#matrix-hint", Static).update(self._hint())
        self._show_verdict()
        self.refresh_bindings()
        self.run_cells()

    def _row(self, index: int) -> dict[str, Text]:
        rows = ladder_row_cells if self.ladder else row_cells
        return rows(self.cells[index], self.results.get(index), self.states[index])

    def _refresh_row(self, index: int) -> None:
        table = self.query_one(DataTable)
        for key, value in self._row(index).items():
            table.update_cell(str(index), key, value, update_width=key in ("raised", "max_abs"))
        if table.cursor_row == index:
            self._show_detail(index)

    def _set_state(self, text: str) -> None:
        self.query_one("#matrix-state", Bar).update(text)

    def _show_detail(self, index: int) -> None:
        if 0 <= index < len(self.cells):
            detail = detail_text(self.cells[index], self.results.get(index), self.states[index])
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

            def progress(index: int, total: int, settings: Settings) -> None:
                self.post_message(self.CellStarted(index))

            # run_matrix is written against WorkerClient; the app's engine has the same API.
            results = run_matrix(self.engine, str(self.path), self.cells, on_progress=progress)  # type: ignore[arg-type]
            # The real client's cancel ends run_matrix quietly; another engine may raise.
            with contextlib.suppress(RunCancelled):
                async with contextlib.aclosing(results):
                    async for index, cell in results:
                        self.post_message(self.CellFinished(index, cell))
                        if self._stopping:
                            break  # a cancel that landed between two cells
            self.post_message(self.Ended(self._stopping, self.clock() - started))

    def on_matrix_screen_cell_started(self, message: CellStarted) -> None:
        index = message.index
        if self._stopping:
            return
        self.states[index] = "running…"
        self._refresh_row(index)
        self._set_state(f"running {index + 1}/{len(self.cells)}: {cell_label(self.cells[index])}")

    def on_matrix_screen_cell_finished(self, message: CellFinished) -> None:
        cell = message.cell
        # The exception message is the snippet's: its control characters are made visible.
        self.results[message.index] = replace(cell, raised=visible(cell.raised)) if cell.raised else cell
        self.states[message.index] = "done"
        self._refresh_row(message.index)
        self._show_verdict()

    def on_matrix_screen_ended(self, message: Ended) -> None:
        self.running = False
        done = len(self.results)
        for index, state in enumerate(self.states):
            if index not in self.results:
                self.states[index] = "cancelled" if state == "running…" else "not run"
                self._refresh_row(index)
        if message.cancelled:
            self._set_state(f"cancelled after {done}/{len(self.cells)}: finished rows kept; escape closes")
        else:
            self._set_state(f"done: {done}/{len(self.cells)} in {message.seconds:.1f} s; escape closes and reruns")
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
            return not self.running and not self.ladder
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
