"""App-wide messages of the run pipeline: the engine's typed events, posted to the app.

They carry the engine's own typed values (`Report`, `Trace`), already made safe for the
terminal by `tui.engine.intake`; handlers read fields and convert nothing. Each carries the
generation of the run it belongs to; the pipeline drops any whose generation is not the newest,
which is how a stale result is kept from ever being shown as current.

Every one is a `RunMessage`: Textual hands them all to the app's one `on_run_message`, which
gives them to the pipeline (`RunPipeline.handle`: one handler per type). A failure of the engine
is never a message: the pipeline sees the worker's failure and handles it there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from textual.message import Message

from playground.engine.events import Trace
from playground.engine.hello import WorkerHello
from playground.engine.report import Report
from playground.engine.settings import Settings


class RunMessage(Message):
    """A message of the run pipeline: every subclass is handled by `on_run_message`."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.handler_name = "on_run_message"


@dataclass
class WorkerReady(RunMessage):
    """The torch worker answered its handshake."""

    hello: WorkerHello


@dataclass
class WorkerRestarted(RunMessage):
    """The engine replaced a worker that died or timed out."""

    generation: int
    reason: str


@dataclass
class SnippetChanged(RunMessage):
    """The watcher saw a (debounced) change to the snippet file."""


@dataclass
class RunStarted(RunMessage):
    """A run of `generation` has the engine and is under way."""

    generation: int
    settings: Settings


@dataclass
class Progress(RunMessage):
    """Where the run is: its step, and call k of n while compiling."""

    generation: int
    step: str
    call: int | None = None
    calls: int | None = None
    message: str = ""

    def can_replace(self, message: Message) -> bool:
        # Latest state only: a queued older progress line of the same run is worthless.
        return isinstance(message, Progress) and message.generation == self.generation


@dataclass
class DiagnosticsReady(RunMessage):
    """Breaks, guards and recompiles are known; equivalence and timings still running."""

    generation: int
    report: Report = field(repr=False)


@dataclass
class FindingsReady(RunMessage):
    """Dynamo's findings from the run's findings lane (backend eager), shown while the run's
    own backend still compiles; the complete report supersedes them."""

    generation: int
    report: Report = field(repr=False)


@dataclass
class RunFinished(RunMessage):
    """The complete report (errors included: they are data), and torch's structured trace
    when the run asked for one (written to a file, never kept with the report)."""

    generation: int
    report: Report = field(repr=False)
    trace: Trace | None = field(default=None, repr=False)
