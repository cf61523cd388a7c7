"""A blocking facade over WorkerClient, for scripts, benchmarks and tests. Torch-free.

It runs the client's event loop in a background thread, so synchronous code can keep one warm
worker across many runs.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from playground.engine.client import DEFAULT_TIMEOUT_S, WorkerClient
from playground.engine.events import EventHandler, RunResult
from playground.engine.hello import WorkerHello
from playground.engine.run_request import RunRequest

T = TypeVar("T")


class SyncWorker:
    def __init__(self, *, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="playground-client", daemon=True)
        self._thread.start()
        self.client = self._call(self._make(timeout_s))

    async def _make(self, timeout_s: float) -> WorkerClient:
        return WorkerClient(timeout_s=timeout_s)

    def _call(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    def start(self) -> WorkerHello:
        return self._call(self.client.start())

    def run(self, request: RunRequest, on_event: EventHandler | None = None) -> RunResult:
        return self._call(self.client.run(request, on_event))

    def cancel(self) -> None:
        self._call(self.client.cancel())

    def close(self) -> None:
        try:
            self._call(self.client.close(), timeout=15)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=5)

    def __enter__(self) -> SyncWorker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
