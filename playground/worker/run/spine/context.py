"""What every phase of a run shares: the run's context (its request, its progress events, its
notes, what it is doing now). Worker-side."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from playground.engine.events import Progress
from playground.worker.run.spine.failures import Cancelled
from playground.worker.run.spine.request import WorkerRequest
from playground.worker.run.spine.waterfall import Waterfall

Emit = Callable[[dict[str, Any]], None]


class RunContext:
    """The run's voice and memory across phases: progress events (a cancelled run stops at the
    next one), the notes the report will carry, and the phase named in an unexpected error."""

    def __init__(self, request: WorkerRequest, emit: Emit, cancelled: Callable[[], bool]) -> None:
        self.request = request
        self.path = request.run.path
        self.settings = request.run.settings
        self.emit = emit
        #: Nobody hears this run's events (the findings lane): a report is not built to be sent.
        self.silent = False
        self.cancelled = cancelled
        self.notes: list[str] = []
        self.calls_total: int | None = None
        #: The call of inputs() being made (0 before the first).
        self.current_call = 0
        #: What the run was doing last (a progress message), for errors that name the phase.
        self.doing = "loading the snippet"
        #: The save's waterfall, marked at the run's phase boundaries (waterfall.py).
        self.waterfall = Waterfall(request)

    def progress(self, phase: str, message: str, call: int | None = None) -> None:
        if self.cancelled():
            raise Cancelled()
        self.doing = message
        if call is not None:
            self.current_call = call
        self.emit(Progress(phase, call, self.calls_total, message).to_dict())
