"""The run pipeline: file changes and key presses become runs on the engine, and the engine's
events come back as messages that update one frozen View.

The parts, each in its own module: the engine (`tui.engine.connection`, its lifecycle a
state machine in `tui.engine.lifecycle`, held through Textual workers by `tui.engine.host`),
which changes become runs and which run is newest (the engine's live-run loop,
`playground.engine.live`, which `watch` uses too), the snippet's text and the run read from
it (`tui.run.snippet`), the reports shown (`tui.run.results`), and how the engine's values
enter the UI (`tui.engine.intake`). The app owns one `RunPipeline` and hands it the messages
its workers post (`PlaygroundApp`'s `on_*` handlers); the workers never touch widgets, and
the handlers here read typed values and convert nothing.

A run asked for with `trace=True` (key t) also writes torch's structured trace when it finishes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.app import App
from textual.worker import Worker

from playground.engine import ranks
from playground.engine.events import Trace
from playground.engine.hello import WorkerHello
from playground.engine.history import History
from playground.engine.live import LiveRun, LiveRuns
from playground.engine.passes import NO_PASSES, Passes
from playground.engine.program import PROGRAM_TOGGLES, ProgramOptions, focused
from playground.engine.report import Report
from playground.engine.run_request import DEFAULT_RUN_FLAGS, RunFlags, RunRequest
from playground.engine.session import SessionWriter
from playground.engine.settings import Settings
from playground.engine.textsafe import one_line
from tui.engine.host import EngineHost
from tui.engine.intake import error_report
from tui.engine.messages import (
    DiagnosticsReady,
    Progress,
    RunFailed,
    RunFinished,
    RunStarted,
    SnippetChanged,
    WorkerReady,
    WorkerRestarted,
)
from tui.engine.protocol import Engine
from tui.files.exports import TRACE_DIR, save_trace, shown
from tui.run.results import RunResults, short_error
from tui.run.snippet import ShownSnippet
from tui.run.view import RunState, View
from tui.run.watching import SnippetWatching
from tui.workshop.presenter import Presenting


class RunPipeline:
    """Owns the snippet, the watcher, the run state and the engine's host for `app`, and
    hands each change to `show` as one frozen `View` (the app's main screen shows it). Read
    through the public properties below."""

    def __init__(
        self,
        app: App[Any],
        show: Callable[[View], None],
        snippet: Path,
        engine: Engine,
        settings: Settings,
        *,
        watch: bool,
        clock: Callable[[], float] = time.monotonic,
        pinned: dict[str, Any] | None = None,
        present: SessionWriter | None = None,
        passes: Passes = NO_PASSES,
        run_flags: RunFlags = DEFAULT_RUN_FLAGS,
        program: ProgramOptions | None = None,
    ) -> None:
        self._app = app
        self._show = show
        self.settings = settings
        #: What every run asks of the worker beyond its report (playground/engine/passes.py):
        #: Dynamo's code once the Code pane is first opened, the kernels profile after key k, the
        #: guard what-if after key u, or any of them from the command line's flags.
        self.passes = passes
        #: What the command line asks of every run (--no-timing, --min-run-time), as for `watch`.
        self.run_flags = run_flags
        #: Settings given on the command line: they outlast a switch to another snippet.
        #: Only the keys given, already typed: {"dynamic": None} is an explicit --dynamic auto.
        self._pinned = dict(pinned or {})
        #: How a file that calls torch.compile itself runs (the command line's -- ARGS, bounds,
        #: --program, --callable), for every save and every file opened.
        self.program = program or ProgramOptions()
        #: The settings the user set (flags, keys) that replace a program's own torch.compile
        #: arguments; and the one callable they act on (None: all), which key o picks.
        self._toggled = [key for key in PROGRAM_TOGGLES if key in self._pinned]
        self.toggle_target: str | None = self.program.only
        #: Across ranks, the rank the panes show (key o; None: rank 0, the report's top level).
        self.shown_rank: int | None = None
        #: How the newest request runs: "program …" words, or "" for a snippet.
        self._mode = ""
        self._source = ShownSnippet(snippet)
        self._requests = LiveRuns()
        self.engine_host = EngineHost(app, engine, self._requests.is_current)
        self._results = RunResults()
        self._watching = SnippetWatching(app, enabled=watch)
        self._clock = clock
        self._run_state = RunState("starting")
        self._started_at: float | None = None
        #: A workshop session the runs are published to (`--present`); inactive without one.
        self.presenting = Presenting(present, lambda words: app.notify(words, severity="error", timeout=10))

    # What the app reads.
    @property
    def engine(self) -> Engine:
        return self.engine_host.engine

    @property
    def hello(self) -> WorkerHello | None:
        """The worker's handshake; None while torch is still starting."""
        return self.engine_host.hello

    @property
    def quitting(self) -> bool:
        return self.engine_host.quitting

    @property
    def snippet(self) -> Path:
        return self._source.path

    @property
    def generation(self) -> int:
        """The newest run's number: messages of older ones are dropped."""
        return self._requests.generation

    @property
    def history(self) -> History:
        return self._results.history

    @property
    def clock(self) -> Callable[[], float]:
        return self._clock

    def shown_report(self) -> Report | None:
        """The report `w` writes: the newest the worker made, else the newest good one."""
        return self._results.shown()

    def publish(self) -> None:
        """Build the frozen View from the current state and hand it to `show`."""
        view = View(
            snippet_name=one_line(self.snippet.name),
            source=self._source.text,
            settings=self.settings,
            hello=self.hello,
            run=self._run_state,
            # A program's panes show the callable `o` picked (its own counts), or the totals.
            report=ranks.shown(focused(self._results.good, self.toggle_target if self._mode else None), self.shown_rank)
            if self._results.good is not None
            else None,
            # The Logs and Output panes are built from the attempt: the same rank as the rest.
            attempt=ranks.shown(self._results.attempt, self.shown_rank) if self._results.attempt is not None else None,
            stale=self._results.stale(self.generation, self._source.sha),
            since=self._results.since,
            passes=self.passes,
            program=self._mode,
            toggled=self.toggled_settings,
            toggle_target=self.toggle_target if self._mode else None,
            shown_rank=self.shown_rank,
        )
        self._show(view)

    def show_run(self, state: RunState) -> None:
        self._run_state = state
        self.publish()

    # Lifecycle: the app's mount and unmount.
    def start(self) -> None:
        self._source.refresh()
        # The mode is on screen from the start, before torch is up.
        if self.program.run_for(self._source.text, ()) is not None:
            self._mode = self.program.words()
        self.publish()
        self._watching.start(self.snippet)
        self.engine_host.start()

    async def close(self) -> None:
        self._watching.stop()
        self.presenting.close()
        await self.shutdown_engine()

    async def shutdown_engine(self) -> None:
        """Stop any run at once and close the engine (see `EngineConnection.shutdown`)."""
        await self.engine_host.shutdown()

    def stop_watching(self) -> None:
        self._watching.stop()

    def toggled(self, what: str) -> None:
        """A setting key was pressed: from now on it replaces what a program passes."""
        if what in PROGRAM_TOGGLES and what not in self._toggled:
            self._toggled.append(what)

    @property
    def toggled_settings(self) -> tuple[str, ...]:
        return tuple(self._toggled)

    @property
    def view_program(self) -> str:
        """How the newest request runs: "program …", or "" for a snippet."""
        return self._mode

    def open_snippet(self, path: Path) -> None:
        """Switch to another snippet file: its SETTINGS apply, then the command line's flags
        (as at start); the device stays."""
        self._toggled = [key for key in PROGRAM_TOGGLES if key in self._pinned]
        self.toggle_target = self.program.only
        self._watching.stop()
        self.settings = self._source.open(path, self.settings, self._pinned)
        self._results.clear()
        self._watching.start(path)
        self.request_run("opened", force=True)

    # Requests.
    def _supersede(self) -> None:
        """Make whatever is in flight stale; a trace asked for and not yet written is lost."""
        if self._requests.supersede():
            self._app.notify(
                "no trace written: a newer change replaced the trace run (press t again)", severity="warning"
            )

    def request_run(self, reason: str, *, force: bool = True, trace: bool = False) -> None:
        """Run the file as it is now under the current settings; the newest request wins.

        `trace` asks the engine for torch's structured trace and writes it when the run ends."""
        if self.quitting:
            return  # "quitting…" stays up: nothing new runs
        if not self._source.refresh():
            # Deleted (or mid-rename): whatever reappears must run, even the same bytes.
            self._supersede()
            self._requests.forget()
            self.show_run(RunState("missing", message=f"{one_line(self.snippet.name)} not found"))
            return
        self.settings = self._source.settings_after_edit(self.settings)
        if not self._requests.wanted(self._source.sha, self.settings, force=force):
            return  # an editor's second write of the same bytes: nothing new to learn
        self._supersede()
        if trace:
            self._requests.expect_trace()
        if not self.engine_host.ready:
            # The worker is still starting; `engine_started` runs the newest request. If it
            # failed to start, asking again (r, a save) is how the user retries.
            self.engine_host.retry_start()
            self.show_run(RunState("starting"))
            return
        self.show_run(RunState("queued", message=reason))
        prepared = self._source.prepared(self.settings)
        text = prepared.source.text if prepared.source is not None else None
        program = self.program.run_for(text, self.toggled_settings, self.toggle_target)
        self._mode = self.program.words() if program is not None else ""
        request = RunRequest(prepared, self.run_flags, self.passes, trace=trace, program=program)
        self.engine_host.send(LiveRun(self.generation, self.snippet, request))

    def hold_runs(self, why: str) -> asyncio.Lock:
        """Lend the engine to something else (the settings matrix): the run in flight is
        cancelled and made stale, and normal runs wait on the returned lock, which the
        borrower holds while it uses the engine. Afterwards, `request_run` restores the view."""
        self._supersede()
        self._requests.forget()  # the rerun afterwards must run, even unchanged bytes
        lock = self.engine_host.lend()
        self.show_run(RunState("paused", message=why))
        return lock

    # The engine's life.
    def on_worker_ready(self, message: WorkerReady) -> None:
        if not self.engine_host.started(message.hello):
            return  # closing: nothing new runs
        self.presenting.hello(self.hello)
        self._requests.forget()
        self.request_run("start")

    def _start_failed(self, message: str) -> None:
        self._results.failed(error_report("worker", "StartFailed", message, self.settings))
        self.show_run(RunState("error", message=f"could not start the torch worker: {message} (r retries)"))

    def on_worker_restarted(self, message: WorkerRestarted) -> None:
        reason = message.reason or "it stopped answering"
        self._app.notify(f"torch worker restarted: {reason}", severity="warning", timeout=6)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Every worker failure lands here, and becomes an error the user can read."""
        failure = self.engine_host.failure(event)
        if failure is None:
            return
        if failure.group == "export":
            self._app.notify(f"export failed: {failure.message}", severity="error", timeout=10)
        elif failure.group == "engine":
            if self.engine_host.start_failed():
                self._start_failed(failure.message)
        elif failure.generation is not None:
            self._app.post_message(RunFailed(failure.generation, failure.message))

    # The engine's messages (the app hands them on).
    def _current(self, generation: int) -> bool:
        # Quitting: what a dying run still reports must not replace "quitting…".
        return self._requests.is_current(generation) and not self.quitting

    def on_snippet_changed(self, message: SnippetChanged) -> None:
        self.request_run("saved", force=False)

    def on_run_started(self, message: RunStarted) -> None:
        if self._current(message.generation):
            self._started_at = self._clock()
            self.show_run(RunState("running", step="loading"))

    def on_progress(self, message: Progress) -> None:
        if self._current(message.generation):
            self.show_run(RunState("running", message.step, message.call, message.calls, message=message.message))

    def on_diagnostics_ready(self, message: DiagnosticsReady) -> None:
        if self._current(message.generation):
            self._results.arrived(message.report, message.generation)
            self.publish()

    def on_run_finished(self, message: RunFinished) -> None:
        if not self._current(message.generation):
            return  # a newer save or setting made it stale: never shown as current
        report = message.report
        self._watching.follow(self._requests.follow(report))
        if self._requests.take_trace(message.generation):
            self.write_trace(message.trace)
        self._source.sync(report)
        self._results.record(report, self._source.text, self._source.sha)
        if not report.content_sha256 or report.content_sha256 == self._source.sha:
            self.presenting.run_finished(report, self.snippet, self._source.text)
        if not self._results.arrived(report, message.generation):
            self.show_run(RunState("error", message=short_error(report)))
            return
        duration = report.duration_s or report.wall_s
        if duration is None and self._started_at is not None:
            duration = self._clock() - self._started_at
        self.show_run(RunState("done", duration_s=duration))

    def on_run_failed(self, message: RunFailed) -> None:
        if not self._current(message.generation):
            return
        if self._requests.take_trace(message.generation):
            self._app.notify("no trace written: the engine failed (see the summary)", severity="error")
        self._results.failed(error_report("worker", "EngineError", message.message, self.settings))
        self.show_run(RunState("error", message=f"worker error: {message.message}"))

    def write_trace(self, trace: Trace | None) -> None:
        """Write a trace run's structured trace off the UI thread, then say how to render it."""
        self._app.run_worker(self._write_trace(trace), name="write_trace", group="export", exit_on_error=False)

    async def _write_trace(self, trace: Trace | None) -> None:
        if trace is None or not trace.lines:
            self._app.notify("no trace came back from this run: the worker's torch wrote none", severity="warning")
            return
        path, command = await asyncio.to_thread(save_trace, trace, Path.cwd() / TRACE_DIR)
        self._app.notify(f"trace written: {shown(path)}\nrender it: {command}", title="trace", timeout=20)
