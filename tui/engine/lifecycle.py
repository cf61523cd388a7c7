"""The engine's life as the app sees it: a small state machine with a table of legal moves.

    STARTING --ready--> READY
    STARTING --failed--> FAILED --retry--> STARTING
    any state --close--> CLOSING (quitting: the engine is closing or closed; final)

Runs are asked for in any state but only sent in READY: while STARTING the newest request waits
for the worker's hello; in FAILED a request is how the user retries the start; in CLOSING
nothing new runs and nothing a dying run reports is shown.
"""

from __future__ import annotations

import enum
from typing import Any


class EngineState(enum.Enum):
    STARTING = "starting"
    """engine.start() is under way (torch importing in the worker)."""
    READY = "ready"
    """The worker answered its handshake: runs go to it."""
    FAILED = "failed"
    """engine.start() raised; the next run request starts it again."""
    CLOSING = "closing"
    """Quitting: the engine is being closed (or is closed); no way back."""


#: Every legal move; anything else is refused (`IllegalTransition`).
TRANSITIONS: dict[EngineState, frozenset[EngineState]] = {
    EngineState.STARTING: frozenset({EngineState.READY, EngineState.FAILED, EngineState.CLOSING}),
    EngineState.READY: frozenset({EngineState.CLOSING}),
    EngineState.FAILED: frozenset({EngineState.STARTING, EngineState.CLOSING}),
    EngineState.CLOSING: frozenset(),
}


class IllegalTransition(RuntimeError):
    """A move the table does not have, e.g. READY after CLOSING."""


class EngineLifecycle:
    """Where the engine is, and its handshake once it has answered. Moves go through `move`,
    which checks them against `TRANSITIONS`; the named methods are the moves the app makes."""

    def __init__(self) -> None:
        self._state = EngineState.STARTING
        self._hello: dict[str, Any] | None = None

    @property
    def state(self) -> EngineState:
        return self._state

    @property
    def hello(self) -> dict[str, Any] | None:
        """The worker's handshake (torch version, backends, cuda); None until READY."""
        return self._hello

    @property
    def ready(self) -> bool:
        return self._state is EngineState.READY

    @property
    def closing(self) -> bool:
        return self._state is EngineState.CLOSING

    def can(self, target: EngineState) -> bool:
        return target in TRANSITIONS[self._state]

    def move(self, target: EngineState) -> None:
        if not self.can(target):
            raise IllegalTransition(f"{self._state.value} -> {target.value}")
        self._state = target

    def started(self, hello: dict[str, Any]) -> bool:
        """The worker answered; False (and nothing changes) when the app is already closing."""
        if not self.can(EngineState.READY):
            return False
        self.move(EngineState.READY)
        self._hello = hello
        return True

    def start_failed(self) -> bool:
        """engine.start() raised; False when that no longer matters (closing)."""
        if not self.can(EngineState.FAILED):
            return False
        self.move(EngineState.FAILED)
        return True

    def retry(self) -> bool:
        """After a failed start: True when the caller must start the engine again."""
        if self._state is not EngineState.FAILED:
            return False
        self.move(EngineState.STARTING)
        return True

    def close(self) -> bool:
        """Begin quitting; True the first time only (the caller then closes the engine once)."""
        if self.closing:
            return False
        self.move(EngineState.CLOSING)
        return True
