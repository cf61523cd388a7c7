"""The app's connection to the engine: its lifecycle, one run at a time, cancelling and closing it.

Textual-free: the engine's host (`tui.engine.host`) calls these from the app's workers, and
posts what comes back as messages.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from playground.engine.errors import RunCancelled
from playground.engine.events import EventHandler, RunResult
from playground.engine.live import LiveRun
from playground.engine.passes import Passes
from tui.engine.lifecycle import EngineLifecycle
from tui.engine.protocol import Engine


def _read_outcome(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


class EngineConnection:
    """Owns the engine, the lock runs take turns on (lent to the settings matrix too), and the
    run in flight."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.lifecycle = EngineLifecycle()
        #: Held by a run while it uses the engine, and by the settings matrix while it borrows it.
        self.lock = asyncio.Lock()
        self._task: asyncio.Future[RunResult] | None = None

    async def start(self) -> dict[str, Any]:
        return dict(await self.engine.start() or {})

    async def run(self, request: LiveRun, on_event: EventHandler, passes: Passes) -> RunResult | None:
        """Run `request` on the engine; None when it was cancelled there. The caller holds `lock`."""
        # The snippet as read for this run travels with it: the engine reads nothing again.
        options: dict[str, Any] = {"prepared": request.prepared}
        if request.trace:
            options["trace"] = True
        options.update(passes.asked())
        task = asyncio.ensure_future(self.engine.run(str(request.path), request.settings, on_event, **options))
        # A superseded run may be cancelled twice over and never awaited to the end; its
        # outcome (often RunCancelled) is read here so asyncio never reports it as lost.
        task.add_done_callback(_read_outcome)
        self._task = task
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            await self._stop(task)
            raise
        except RunCancelled:
            return None
        finally:
            self._task = None

    async def _stop(self, task: asyncio.Future[RunResult]) -> None:
        """Superseded by a newer request: cancel through the engine, so the worker process
        stops compiling this run too; cancelling our await alone would leave it busy."""
        if self.lifecycle.closing:
            task.cancel()
        while not task.done():
            # Repeated: a cancel that lands before the run has begun is a no-op.
            await self.engine.cancel()
            await asyncio.wait({task}, timeout=0.05)
        with contextlib.suppress(BaseException):
            task.result()

    async def shutdown(self) -> None:
        """Stop any run at once and close the engine (quit, or the app going away).

        The engine is closed before the run is cancelled: a closed client kills its busy
        worker and starts no other, while a run cancelled on an open client replaces its
        worker (torch imported again: seconds) and quitting would wait for that."""
        task = self._task
        if self.lifecycle.close():
            await self.engine.close()
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
