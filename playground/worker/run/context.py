"""What every phase of a run shares: the request as a typed value, and the run's context (its
progress events, its notes, what it is doing now). Worker-side."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from playground.engine.settings import Settings
from playground.worker.run.failures import Cancelled

Emit = Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class RunRequest:
    """One "run" message from the client."""

    id: Any
    path: str
    source: str
    #: The settings as the client resolved them, read back with the one codec: the worker
    #: never rebuilds defaults of its own. (switches.problem names a bad config value.)
    settings: Settings = field(default_factory=Settings)
    timing: bool = True
    min_run_time: float = 0.2
    trace: bool = False
    #: The template's own warm-up run: no sys.path change, no imports tracked.
    warmup: bool = False

    @classmethod
    def from_message(cls, message: Mapping[str, Any]) -> RunRequest:
        return cls(
            id=message.get("id", 0),
            path=os.path.abspath(message["path"]),
            source=message["source"],
            settings=Settings.from_dict(message.get("settings")),
            timing=bool(message.get("timing", True)),
            min_run_time=float(message.get("min_run_time", 0.2)),
            trace=bool(message.get("trace")),
            warmup=bool(message.get("warmup")),
        )


class RunContext:
    """The run's voice and memory across phases: progress events (a cancelled run stops at the
    next one), the notes the report will carry, and the phase named in an unexpected error."""

    def __init__(self, request: RunRequest, emit: Emit, cancelled: Callable[[], bool]) -> None:
        self.request = request
        self.path = request.path
        self.settings = request.settings
        self.emit = emit
        self.cancelled = cancelled
        self.notes: list[str] = []
        self.calls_total: int | None = None
        #: The call of inputs() being made (0 before the first).
        self.current_call = 0
        #: What the run was doing last (a progress message), for errors that name the phase.
        self.doing = "loading the snippet"

    def progress(self, phase: str, message: str, call: int | None = None) -> None:
        if self.cancelled():
            raise Cancelled()
        self.doing = message
        if call is not None:
            self.current_call = call
        self.emit({"event": "progress", "phase": phase, "call": call, "calls": self.calls_total, "message": message})
