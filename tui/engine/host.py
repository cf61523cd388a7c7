"""The app's hold on the engine, as Textual workers and messages: start it, run one request
at a time on it, lend it to the settings matrix, close it. `RunPipeline` builds on this and says
what the messages do to the view.
"""

from __future__ import annotations

import asyncio
from typing import Any

from textual import work
from textual.app import App
from textual.worker import Worker, WorkerState

from playground.engine.events import RunEvent
from playground.engine.live import LiveRun
from playground.engine.passes import NO_PASSES, Passes
from playground.engine.textsafe import visible
from tui.engine.connection import EngineDriver
from tui.engine.intake import event_message, visible_report
from tui.engine.messages import RunFailed, RunFinished, RunStarted, WorkerReady, WorkerRestarted
from tui.engine.protocol import Engine


class EngineHost(App[None]):
    """Workers post messages and never touch widgets; every worker failure lands in
    `on_worker_state_changed`. Subclasses answer the three hooks at the end."""

    def __init__(self, engine: Engine) -> None:
        super().__init__()
        self._engine_driver = EngineDriver(engine)  # not `_driver`: Textual's own terminal driver
        self._worker_generation: dict[Worker[Any], int] = {}
        #: What every run asks of the worker beyond its report (playground/engine/passes.py):
        #: Dynamo's code once the Code pane is first opened, the kernels profile after key k, the
        #: guard what-if after key u, or any of them from the command line's flags.
        self.passes: Passes = NO_PASSES

    @property
    def engine(self) -> Engine:
        return self._engine_driver.engine

    @property
    def hello(self) -> dict[str, Any] | None:
        """The worker's handshake; None while torch is still starting."""
        return self._engine_driver.lifecycle.hello

    @property
    def quitting(self) -> bool:
        return self._engine_driver.lifecycle.closing

    @work(group="engine", exit_on_error=False)
    async def start_engine(self) -> None:
        self.post_message(WorkerReady(await self._engine_driver.start()))

    async def shutdown_engine(self) -> None:
        """Stop any run at once and close the engine (see `EngineDriver.shutdown`)."""
        await self._engine_driver.shutdown()

    def send(self, request: LiveRun) -> None:
        """Run `request` on the engine; the newest request wins (the run worker is exclusive)."""
        self._worker_generation[self.run_snippet(request)] = request.generation

    @work(exclusive=True, group="run", exit_on_error=False)
    async def run_snippet(self, request: LiveRun) -> None:
        """Run one request on the engine; posts messages, never touches widgets."""
        async with self._engine_driver.lock:
            if not self.is_current(request.generation):
                return
            self.post_message(RunStarted(request.generation, request.settings))

            def on_event(event: RunEvent) -> None:
                message = event_message(request.generation, event)
                if message is not None:
                    self.post_message(message)

            result = await self._engine_driver.run(request, on_event, self.passes)
            if result is not None:
                report = visible_report(result.report)
                self.post_message(RunFinished(request.generation, report, result.trace))

    def lend_engine(self) -> asyncio.Lock:
        """Cancel the run in flight and return the lock normal runs wait on (the borrower
        holds it while it uses the engine)."""
        self.workers.cancel_group(self, "run")
        return self._engine_driver.lock

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Every worker failure lands here, and becomes an error the user can read."""
        worker = event.worker
        if event.state not in (WorkerState.ERROR, WorkerState.SUCCESS, WorkerState.CANCELLED):
            return
        generation = self._worker_generation.pop(worker, None)
        if event.state != WorkerState.ERROR:
            return
        error = worker.error
        message = visible(f"{type(error).__name__}: {error}") if error else "unknown failure"
        if worker.group == "export":
            self.notify(f"export failed: {message}", severity="error", timeout=10)
        elif worker.group == "engine":
            if self._engine_driver.lifecycle.start_failed():
                self.engine_start_failed(message)
        elif generation is not None:
            self.post_message(RunFailed(generation, message))

    def on_worker_ready(self, message: WorkerReady) -> None:
        if self._engine_driver.lifecycle.started(message.hello):
            self.engine_started()

    def on_worker_restarted(self, message: WorkerRestarted) -> None:
        reason = message.reason or "it stopped answering"
        self.notify(f"torch worker restarted: {reason}", severity="warning", timeout=6)

    def retry_start(self) -> bool:
        """After a failed start: start the engine again; False when it had not failed."""
        if not self._engine_driver.lifecycle.retry():
            return False
        self.start_engine()
        return True

    @property
    def engine_ready(self) -> bool:
        return self._engine_driver.lifecycle.ready

    # Hooks: what the subclass does with the engine's life.
    def is_current(self, generation: int) -> bool:
        """Whether run `generation` is still the newest (a stale one never starts)."""
        raise NotImplementedError

    def engine_started(self) -> None:
        """The worker answered: run the newest request."""
        raise NotImplementedError

    def engine_start_failed(self, message: str) -> None:
        """The worker could not be started; `message` is safe to show."""
        raise NotImplementedError
