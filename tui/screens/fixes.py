"""`F` on the Breaks or Recomp pane: the remedies torch offers for those sites, each run as a
variant of the current save (the file is never written), a row filling in as each variant ends.

The app lends the engine (and the lock normal runs wait on) while this screen runs, as the
matrix does; escape cancels through the engine and keeps the rows that came. `a` on a config
or `dynamic` remedy closes the screen and hands the change to the app, which toggles it on the
session's settings (and off again when it is already on) and reruns.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static
from textual.worker import Worker, WorkerState

from playground.engine.errors import RunCancelled
from playground.engine.events import FixEvent
from playground.engine.passes import Passes
from playground.engine.report import Fix, Report
from playground.engine.run_request import RunFlags, RunRequest
from playground.engine.settings import Settings, config_key
from playground.engine.snippet import prepared_as_given
from playground.engine.wording import fixes as fix_words
from playground.engine.wording.line import Line, plural
from tui.engine.protocol import Engine
from tui.panes.common import styled_lines
from tui.widgets.display import Bar

#: What `a` hands the app: config pairs, and `dynamic` when the remedy sets it.
Applied = tuple[tuple[tuple[str, Any], ...], bool | None]


def applicable(fix: Fix) -> Applied | None:
    """The session change a remedy is (a config key, or dynamic=True), None for a code change."""
    if fix.remedy == "dynamic":
        return (), True
    if fix.remedy == "reorderable_logging" and fix.change.endswith(")") and ".add(" in fix.change:
        name = fix.change.rsplit(".add(", 1)[1][:-1]
        return (("dynamo.reorderable_logging_functions", (name,)),), None
    if fix.remedy != "config" or " = " not in fix.change:
        return None
    left, right = fix.change.split(" = ", 1)
    key = config_key(left.strip())
    value = {"True": True, "False": False}.get(right.strip(), right.strip())
    if key is None:
        return None
    if isinstance(value, str):
        try:
            value = int(value)
        except ValueError:
            return None
    return ((key, value),), None


class FixesScreen(Screen[Applied | None]):
    """Tries the fixes for `ask` ("break", "recompile" or "KIND:LINE") of the snippet at `path`."""

    BINDINGS = [
        Binding("escape", "stop", "cancel", tooltip="Cancel the variants; finished rows stay", id="fixes-cancel"),
        Binding("escape,q", "close", "close", tooltip="Close the fixes", id="fixes-close"),
        Binding(
            "a",
            "apply",
            "apply",
            tooltip="Toggle the highlighted config, logging or dynamic remedy on the session's settings and rerun",
            id="fixes-apply",
        ),
    ]

    DEFAULT_CSS = """
    FixesScreen #fixes-title { background: $primary 30%; text-style: bold; }
    FixesScreen #fixes-state { background: $boost; text-style: bold; }
    FixesScreen DataTable { height: auto; max-height: 8; }
    FixesScreen #fixes-detail { height: 1fr; padding: 0 1; }
    """

    @dataclass
    class Arrived(Message):
        """The run's own report (`fix` None), or one remedy's result."""

        report: Report | None
        fix: Fix | None

    @dataclass
    class Ended(Message):
        report: Report | None
        cancelled: bool
        error: str = ""

    def __init__(
        self, engine: Engine, lock: asyncio.Lock, path: Path, settings: Settings, flags: RunFlags, ask: str
    ) -> None:
        super().__init__()
        self.engine = engine
        self.lock = lock
        self.path = path
        self.settings = settings
        self.flags = flags
        self.ask = ask
        self.fixes: list[Fix] = []
        self.report: Report | None = None
        self.running = True
        self._stopping = False

    def compose(self) -> ComposeResult:
        what = {"break": "the breaks", "recompile": "the recompiles"}.get(self.ask, self.ask.replace(":", " at line "))
        yield Bar(f"fixes for {what} of {self.path.name}, each a variant run; your file unchanged", id="fixes-title")
        yield Bar("running the save once more, then each remedy…", id="fixes-state")
        yield DataTable(cursor_type="row", cell_padding=1, zebra_stripes=False)
        yield Static(id="fixes-detail")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for key, header in (("target", "site"), ("remedy", "remedy"), ("result", "result"), ("values", "values")):
            table.add_column(header, key=key)
        table.add_column("speedup", key="speedup", width=7)
        table.focus()
        self.run_fixes()

    @work(exclusive=True, group="fixes", exit_on_error=False)
    async def run_fixes(self) -> None:
        async with self.lock:
            if self._stopping:
                self.post_message(self.Ended(None, True))
                return
            prepared = prepared_as_given(str(self.path), self.settings)
            request = RunRequest(prepared, self.flags, Passes(fixes=self.ask))

            def seen(event: object) -> None:
                if isinstance(event, FixEvent):
                    self.post_message(self.Arrived(event.report, event.fix))

            try:
                result = await self.engine.run(request, seen)
            except RunCancelled:
                self.post_message(self.Ended(None, True))
                return
            self.post_message(self.Ended(result.report, self._stopping))

    def on_fixes_screen_arrived(self, message: Arrived) -> None:
        if message.fix is None:
            self.report = message.report
            self._state("the save ran; trying each remedy as a variant of it…")
            return
        self.fixes.append(message.fix)
        self._row(len(self.fixes) - 1, message.fix)
        self._state(f"{plural(len(self.fixes), 'remedy', 'remedies')} tried so far; escape cancels")

    def _row(self, index: int, fix: Fix) -> None:
        result, tag = fix_words.outcome_words(fix)
        short = result.split(";")[0]
        speed = f"{fix.speedup:.2f}x" if fix.speedup is not None else "-"
        values = fix.equivalence + (" prints " + fix.prints if fix.prints in ("dropped", "changed") else "")
        target = f"{fix.target.kind} {fix.target.line}"
        self.query_one(DataTable).add_row(target, fix.remedy, short, values, speed, key=str(index))
        if index == 0:
            self._detail(0)

    def on_fixes_screen_ended(self, message: Ended) -> None:
        self.running = False
        report = message.report
        if report is not None and report.error is not None:
            self._state(f"the save failed: {report.error.one_line()}; escape closes")
        elif message.cancelled:
            self._state(f"cancelled: {plural(len(self.fixes), 'remedy', 'remedies')} tried; escape closes")
        else:
            ordered = list(report.fixes) if report is not None else self.fixes
            if report is not None:
                self.report = report
            self._reorder(ordered)
            applied = "; a: toggle it on the session" if any(applicable(f) for f in self.fixes) else ""
            self._state(f"{plural(len(self.fixes), 'remedy', 'remedies')} tried, best first{applied}; esc closes")
        self.refresh_bindings()

    def _reorder(self, fixes: list[Fix]) -> None:
        table = self.query_one(DataTable)
        table.clear()
        self.fixes = []
        for fix in fixes:
            self.fixes.append(fix)
            self._row(len(self.fixes) - 1, fix)
        if not fixes:
            self._detail(None)

    def _state(self, words: str) -> None:
        self.query_one("#fixes-state", Bar).update(words)

    def _detail(self, index: int | None) -> None:
        lines = fix_words.one_fix(self.fixes[index]) if index is not None and index < len(self.fixes) else []
        advice = self.report.fix_advice if self.report is not None else ()
        for item in advice:
            lines += fix_words.advice_lines(item)
        if not lines and not self.running:
            lines = [Line.of("no remedy applies to these sites")]
        self.query_one("#fixes-detail", Static).update(Text("\n").join(styled_lines(lines)))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._detail(event.cursor_row)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "fixes" and event.state == WorkerState.ERROR and self.running:
            self.running = False
            self._state(f"stopped: {type(event.worker.error).__name__}: {event.worker.error}; escape closes")
            self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "stop":
            return self.running and not self._stopping
        if action == "close":
            return not self.running
        if action == "apply":
            return not self.running and self._highlighted() is not None
        return True

    def _highlighted(self) -> Applied | None:
        row = self.query_one(DataTable).cursor_row
        return applicable(self.fixes[row]) if 0 <= row < len(self.fixes) else None

    def action_apply(self) -> None:
        change = self._highlighted()
        if change is not None:
            self.dismiss(change)

    def action_stop(self) -> None:
        self._stopping = True
        self._state("cancelling: stopping the variants in the worker…")
        self.refresh_bindings()
        self.cancel_engine()

    @work(exclusive=True, group="fixes-stop", exit_on_error=False)
    async def cancel_engine(self) -> None:
        while self.running:
            with contextlib.suppress(Exception):
                await self.engine.cancel()
            await asyncio.sleep(0.05)

    def action_close(self) -> None:
        self.dismiss(None)
