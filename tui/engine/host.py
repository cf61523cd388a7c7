"""The app's hold on the engine, as Textual workers and messages: start it, run one request
at a time on it, lend it to the settings matrix, close it. The run pipeline owns one
(`tui.run.pipeline`) and says what the messages do to the view.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from textual.app import App
from textual.worker import Worker, WorkerState

from playground.engine.events import RunEvent
from playground.engine.live import LiveRun
from playground.engine.passes import Passes
from playground.engine.textsafe import visible
from tui.engine.connection import EngineConnection
from tui.engine.intake import event_message, visible_report
from tui.engine.messages import RunFinished, RunStarted, WorkerReady
from tui.engine.protocol import Engine


@dataclass(frozen=True)
class WorkerFailure:
    """A Textual worker that ended in an error: its group, its message (safe to show), and
    the run it ran, if it ran one."""

    group: str
    message: str
    generation: int | None = None


class EngineHost:
    """Runs the engine's calls as Textual workers of `app` (`app.run_worker`): they post
    messages to the app and never touch widgets. `is_current` says whether a run is still the
    newest when the engine is free for it (a stale one never starts)."""

    def __init__(self, app: App[Any], engine: Engine, is_current: Callable[[int], bool]) -> None:
        self._app = app
        self._connection = EngineConnection(engine)
        self._is_current = is_current
        self._worker_generation: dict[Worker[Any], int] = {}

    @property
    def engine(self) -> Engine:
        return self._connection.engine

    @property
    def hello(self) -> dict[str, Any] | None:
        """The worker's handshake; None while torch is still starting."""
        return self._connection.lifecycle.hello

    @property
    def quitting(self) -> bool:
        return self._connection.lifecycle.closing

    @property
    def ready(self) -> bool:
        return self._connection.lifecycle.ready

    def start(self) -> None:
        self._app.run_worker(self._start(), name="start_engine", group="engine", exit_on_error=False)

    async def _start(self) -> None:
        self._app.post_message(WorkerReady(await self._connection.start()))

    def started(self, hello: dict[str, Any]) -> bool:
        """The worker answered; False when that no longer matters (the app is closing)."""
        return self._connection.lifecycle.started(hello)

    def retry_start(self) -> bool:
        """After a failed start: start the engine again; False when it had not failed."""
        if not self._connection.lifecycle.retry():
            return False
        self.start()
        return True

    async def shutdown(self) -> None:
        """Stop any run at once and close the engine (see `EngineConnection.shutdown`)."""
        await self._connection.shutdown()

    def send(self, request: LiveRun, passes: Passes) -> None:
        """Run `request` on the engine; the newest request wins (the run worker is exclusive)."""
        worker = self._app.run_worker(
            self._run(request, passes), name="run_snippet", group="run", exclusive=True, exit_on_error=False
        )
        self._worker_generation[worker] = request.generation

    async def _run(self, request: LiveRun, passes: Passes) -> None:
        """Run one request on the engine; posts messages, never touches widgets."""
        async with self._connection.lock:
            if not self._is_current(request.generation):
                return
            self._app.post_message(RunStarted(request.generation, request.settings))

            def on_event(event: RunEvent) -> None:
                message = event_message(request.generation, event)
                if message is not None:
                    self._app.post_message(message)

            result = await self._connection.run(request, on_event, passes)
            if result is not None:
                report = visible_report(result.report)
                self._app.post_message(RunFinished(request.generation, report, result.trace))

    def lend(self) -> asyncio.Lock:
        """Cancel the run in flight and return the lock normal runs wait on (the borrower
        holds it while it uses the engine)."""
        self._app.workers.cancel_group(self._app, "run")
        return self._connection.lock

    def failure(self, event: Worker.StateChanged) -> WorkerFailure | None:
        """What a worker's end was: None unless it failed (with the run it ran, if any)."""
        worker = event.worker
        if event.state not in (WorkerState.ERROR, WorkerState.SUCCESS, WorkerState.CANCELLED):
            return None
        generation = self._worker_generation.pop(worker, None)
        if event.state != WorkerState.ERROR:
            return None
        error = worker.error
        message = visible(f"{type(error).__name__}: {error}") if error else "unknown failure"
        return WorkerFailure(worker.group, message, generation)

    def start_failed(self) -> bool:
        """engine.start() raised; False when that no longer matters (closing)."""
        return self._connection.lifecycle.start_failed()
