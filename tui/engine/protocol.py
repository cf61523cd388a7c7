"""What the app needs from an engine: `playground.engine.client.WorkerClient`, or a fake in tests."""

from __future__ import annotations

from typing import Protocol

from playground.engine.events import EventHandler, RunResult
from playground.engine.hello import WorkerHello
from playground.engine.run_request import RunRequest


class Engine(Protocol):
    """The async API of the warm torch worker, as the app uses it.

    `run` returns the typed `RunResult` (errors are data in `report.error`), hands `on_event`
    typed events (ProgressEvent, DiagnosticsEvent, RestartEvent) and raises
    `playground.engine.errors.RunCancelled` when cancelled on request."""

    hello: WorkerHello | None

    async def start(self) -> WorkerHello: ...

    # The request is the whole run as the app asks for it: the snippet as it read it for this
    # run, the command line's run flags, the passes asked for, whether a trace comes back.
    async def run(self, request: RunRequest, on_event: EventHandler | None = None) -> RunResult: ...

    async def cancel(self) -> None: ...

    async def close(self) -> None: ...


def real_engine(*, timeout_s: float | None = None) -> Engine:
    """The torch worker client; imported here, late, so tests never need it. `timeout_s` is its
    run timeout (the client's default when None)."""
    from playground.engine.client import WorkerClient

    return WorkerClient(timeout_s=timeout_s) if timeout_s else WorkerClient()
