"""What the engine's messages do to the run's state and the view: one handler per message type,
and the worker's failure handled where it is seen (never posted back as a message). Mixed into
`RunPipeline` (`tui/run/pipeline.py`), whose state it updates.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.worker import Worker

from playground.engine.events import Trace
from tui.engine.intake import error_report
from tui.engine.messages import (
    DiagnosticsReady,
    FindingsReady,
    Progress,
    RunFinished,
    RunMessage,
    RunStarted,
    SnippetChanged,
    WorkerReady,
    WorkerRestarted,
)
from tui.files.exports import TRACE_DIR, save_trace, shown
from tui.run.results import short_error
from tui.run.view import RunState


class Arrivals:
    """The pipeline's handlers of what arrives from the engine (see `RunPipeline`)."""

    def handle(self: Any, message: RunMessage) -> None:
        """The one door for the messages the app's workers post (the app hands each on)."""
        handlers: dict[type[RunMessage], Callable[[Any], None]] = {
            SnippetChanged: lambda _: self.run("saved", force=False),
            WorkerReady: self._worker_ready,
            WorkerRestarted: self._worker_restarted,
            RunStarted: self._run_started,
            Progress: self._progress,
            DiagnosticsReady: self._diagnostics_ready,
            FindingsReady: self._findings_ready,
            RunFinished: self._run_finished,
        }
        handlers[type(message)](message)

    def _worker_ready(self: Any, message: WorkerReady) -> None:
        if not self.engine_host.started(message.hello):
            return  # closing: nothing new runs
        self.presenting.hello(self.hello)
        self._requests.forget()
        self.run("start")

    def _start_failed(self: Any, message: str) -> None:
        self._results.failed(error_report("worker", "StartFailed", message, self.settings))
        self.show_run(RunState("error", message=f"could not start the torch worker: {message} (r retries)"))

    def _worker_restarted(self: Any, message: WorkerRestarted) -> None:
        reason = message.reason or "it stopped answering"
        self._app.notify(f"torch worker restarted: {reason}", severity="warning", timeout=6)

    def on_worker_state_changed(self: Any, event: Worker.StateChanged) -> None:
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
            self._run_failed(failure.generation, failure.message)

    def _current(self: Any, generation: int) -> bool:
        # Quitting: what a dying run still reports must not replace "quitting…".
        return self._requests.is_current(generation) and not self.quitting

    def _run_started(self: Any, message: RunStarted) -> None:
        if self._current(message.generation):
            self._started_at = self.clock()
            self.show_run(RunState("running", step="loading"))

    def _progress(self: Any, message: Progress) -> None:
        if self._current(message.generation):
            state = RunState("running", message.step, message.call, message.calls, message=message.message)
            self.show_run(self._results.early.state(state, message.generation))

    def _findings_ready(self: Any, message: FindingsReady) -> None:
        """Dynamo's findings from the run's findings lane, while its backend compiles."""
        if self._current(message.generation):
            self._results.early.arrived(message.report, message.generation)
            self._results.arrived(message.report, message.generation)
            self.show_run(self._results.early.state(self._run_state, message.generation))

    def _diagnostics_ready(self: Any, message: DiagnosticsReady) -> None:
        if self._current(message.generation) and self._results.early.diagnosed(message.report, message.generation):
            self._results.arrived(message.report, message.generation)
            self.publish()

    def _run_finished(self: Any, message: RunFinished) -> None:
        if not self._current(message.generation):
            return  # a newer save or setting made it stale: never shown as current
        report = message.report
        superseded = self._results.early.finished(report, message.generation)
        if superseded:
            self._app.notify(superseded, severity="warning", timeout=10)
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
            duration = self.clock() - self._started_at
        self.show_run(RunState("done", duration_s=duration))

    def _run_failed(self: Any, generation: int, message: str) -> None:
        """The engine itself raised for this run: no report exists (called from the worker's
        failure, never posted)."""
        if not self._current(generation):
            return
        if self._requests.take_trace(generation):
            self._app.notify("no trace written: the engine failed (see the summary)", severity="error")
        self._results.failed(error_report("worker", "EngineError", message, self.settings))
        self.show_run(RunState("error", message=f"worker error: {message}"))

    def write_trace(self: Any, trace: Trace | None) -> None:
        """Write a trace run's structured trace off the UI thread, then say how to render it."""
        self._app.run_worker(self._write_trace(trace), name="write_trace", group="export", exit_on_error=False)

    async def _write_trace(self: Any, trace: Trace | None) -> None:
        if trace is None or not trace.lines:
            self._app.notify("no trace came back from this run: the worker's torch wrote none", severity="warning")
            return
        path, command = await asyncio.to_thread(save_trace, trace, Path.cwd() / TRACE_DIR)
        self._app.notify(f"trace written: {shown(path)}\nrender it: {command}", title="trace", timeout=20)
