"""Where Dynamo is tracing, said while it traces. A run's child samples its main thread's stack
from a second thread, while the run is compiling, and sends the snippet line Dynamo is on and how
many user frames deep it has inlined, as a progress event. Two things need it: a long trace is
no longer a silent "compiling call 1", and a trace that crashes the process (a deep recursion
takes Dynamo's own tracer past the C stack: SIGSEGV, in a plain `python` as in ours) leaves its
line behind, where the stack dump shows only torch's frames. Worker-side; compat reads the
translator.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from playground.engine.events import Progress, Tracing
from playground.worker import compat

#: How often the stack is sampled, and how long a trace must have run before the first word:
#: a trace that ends within a second was never worth a line.
EVERY_S = 0.25
QUIET_S = 1.0
#: At most one event per this many seconds: the app redraws its status line on each.
SAY_EVERY_S = 1.0


class TracerWatch:
    """One run's watch: `sent` follows the run's own progress events (the step, the call)."""

    def __init__(self, emit: Callable[[dict[str, Any]], None], snippet_path: str) -> None:
        self.emit = emit
        self.path = snippet_path
        self.main = threading.get_ident()
        self.progress = Progress()
        self.since = time.monotonic()
        self._said: tuple[int, int] | None = None
        self._said_at = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="compile-playground-tracer-watch", daemon=True)

    def start(self) -> TracerWatch:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)

    def sent(self, message: dict[str, Any]) -> None:
        """A progress event of the run's own (not ours): the step it names starts now."""
        progress = Progress.from_dict(message)
        if progress is not None and progress.tracing is None:
            self.progress = progress
            self.since = time.monotonic()

    def _loop(self) -> None:
        while not self._stop.wait(EVERY_S):
            progress = self.progress
            if progress.phase != "compiling" or time.monotonic() - self.since < QUIET_S:
                continue
            try:
                at = compat.dynamo_tracing_at(sys._current_frames().get(self.main), self.path)
            except Exception:  # noqa: BLE001 - a torch whose translator we cannot read: say nothing
                continue
            now = time.monotonic()
            if at is None or at == self._said or now - self._said_at < SAY_EVERY_S:
                continue
            self._said, self._said_at = at, now
            line, depth = at
            words = f"{progress.message or 'compiling'}: Dynamo tracing line {line}"
            if depth > 1:
                words += f", {depth:,} calls deep"
            said = replace(progress, message=words, tracing=Tracing(line, depth))
            try:
                self.emit(said.to_dict())
            except Exception:  # noqa: BLE001 - the channel is gone: the run's own send says so
                return
