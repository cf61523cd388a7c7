"""What the app needs from an engine: `playground.engine.client.WorkerClient`, or a fake in tests."""

from __future__ import annotations

from typing import Any, Protocol

from playground.engine.events import EventHandler, RunResult
from playground.engine.settings import Settings


class Engine(Protocol):
    """The async API of the warm torch worker, as the app uses it.

    `run` returns the typed `RunResult` (errors are data in `report.error`), hands `on_event`
    typed events (ProgressEvent, DiagnosticsEvent, RestartEvent) and raises
    `playground.engine.errors.RunCancelled` when cancelled on request."""

    hello: dict[str, Any] | None

    async def start(self) -> dict[str, Any]: ...

    # `options` are WorkerClient.run's keywords: the app always passes `prepared` (the snippet as
    # it read it for this run), and trace, dynamo_code and kernels only when it needs them.
    async def run(
        self,
        path: str,
        settings: Settings,
        on_event: EventHandler | None = None,
        **options: Any,
    ) -> RunResult: ...

    async def cancel(self) -> None: ...

    async def close(self) -> None: ...


def real_engine(*, run_defaults: dict[str, Any] | None = None, **kwargs: Any) -> Engine:
    """The torch worker client; imported here, late, so tests never need it. `run_defaults` are
    WorkerClient.run's keywords for every run (the app's --no-timing and --min-run-time)."""
    from playground.engine.client import WorkerClient

    client = WorkerClient(**kwargs)
    return WithRunDefaults(client, run_defaults) if run_defaults else client


class WithRunDefaults:
    """An engine whose every run takes `defaults` unless the run says otherwise: the command
    line's run flags, which hold for the whole session as they do for `watch`."""

    def __init__(self, engine: Engine, defaults: dict[str, Any]) -> None:
        self._engine = engine
        self._defaults = dict(defaults)

    @property
    def hello(self) -> dict[str, Any] | None:
        return self._engine.hello

    async def start(self) -> dict[str, Any]:
        return await self._engine.start()

    async def run(
        self, path: str, settings: Settings, on_event: EventHandler | None = None, **options: Any
    ) -> RunResult:
        return await self._engine.run(path, settings, on_event, **{**self._defaults, **options})

    async def cancel(self) -> None:
        await self._engine.cancel()

    async def close(self) -> None:
        await self._engine.close()
