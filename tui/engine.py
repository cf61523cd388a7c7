"""What the app needs from an engine: `playground.engine.client.WorkerClient`, or a fake in tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from playground.engine.errors import RunCancelled
from playground.engine.settings import Settings


class Engine(Protocol):
    """The async API of the warm torch worker, as the app uses it."""

    hello: dict[str, Any] | None

    async def start(self) -> dict[str, Any]: ...

    # `options` are WorkerClient.run's keywords (trace, timing, min_run_time); the app passes
    # them only when it needs them, so an engine without them still runs the normal view.
    async def run(
        self,
        path: str,
        settings: Settings,
        on_event: Callable[[dict[str, Any]], None] | None = None,
        **options: Any,
    ) -> dict[str, Any]: ...

    async def cancel(self) -> None: ...

    async def close(self) -> None: ...


def is_run_cancelled(exc: BaseException) -> bool:
    """Whether `exc` is the engine saying the run was cancelled on request: the one
    cancellation exception, shared by the engine, its fakes and the UI."""
    return isinstance(exc, RunCancelled)


def real_engine(**kwargs: Any) -> Engine:
    """The torch worker client; imported here, late, so tests never need it."""
    from playground.engine.client import WorkerClient

    return WorkerClient(**kwargs)
