"""What the screen shows, as one frozen value rebuilt on every change."""

from __future__ import annotations

from dataclasses import dataclass, field

from playground.engine.hello import WorkerHello
from playground.engine.passes import NO_PASSES, Passes
from playground.engine.report import Report, RunError
from playground.engine.settings import Settings
from tui.run.compare import BeforeAfter

#: The run's steps as the engine reports them (`ProgressEvent.step`), as the summary bar
#: words them when the worker sent no message.
STEP_WORDS = {
    "queued": "sent to the worker",
    "loading": "loading snippet",
    "compiling": "compiling",
    "equivalence": "checking equivalence",
    "reference": "running the reference",
    "dynamo_code": "capturing Dynamo's code",
    "timing": "timing",
}


@dataclass(frozen=True)
class RunState:
    """Where the newest run is. `kind`: starting, idle, queued, running, done, error, missing,
    paused (the engine is lent to the settings matrix), quitting."""

    kind: str = "starting"
    step: str = ""
    call: int | None = None
    calls: int | None = None
    duration_s: float | None = None
    message: str = ""

    def words(self, *, short: bool = False) -> str:
        """The state spelled out, so no meaning rides on colour alone; `short` where columns are
        few (`done 2.1 s`)."""
        if self.kind == "starting":
            return "starting torch…"
        if self.kind == "queued":
            return f"{self.message or 'rerun'}: rerunning…"
        if self.kind == "running":
            text = self.message or STEP_WORDS.get(self.step, self.step or "running")
            if short and self.step == "findings":
                # "findings shown; inductor compiling": the panes show the findings already.
                text = text.rpartition("; ")[2]
            if self.step == "compiling" and self.call:
                text = f"compiling call {self.call}" + (f"/{self.calls}" if self.calls else "")
            return f"{text}…"
        if self.kind == "done":
            if self.duration_s is None:
                return "done"
            return f"done {self.duration_s:.1f} s" if short else f"done in {self.duration_s:.1f} s"
        if self.kind == "error":
            return f"error: {self.message}"
        if self.kind == "missing":
            return f"waiting: {self.message}"
        if self.kind == "paused":
            return f"paused: {self.message}"
        if self.kind == "quitting":
            return "quitting: stopping the torch worker…"
        return "idle"


@dataclass(frozen=True)
class View:
    """Everything the panes need. `report` is the newest result without an error; `attempt`
    is the newest result of any kind; `stale` says `report` is not the current one."""

    snippet_name: str = ""
    source: str = ""
    settings: Settings = field(default_factory=Settings)
    hello: WorkerHello | None = None
    run: RunState = field(default_factory=RunState)
    report: Report | None = None
    attempt: Report | None = None
    stale: bool = False
    since: BeforeAfter | None = None
    """The newest complete run against the previous one with the same settings."""
    passes: Passes = NO_PASSES
    """What the runs ask for beyond the report (keys k and u, opening the Code pane, or the
    command line's flags)."""
    #: How the file runs when it is a program ("program -- --epochs 2"); "" for a snippet.
    program: str = ""
    #: The settings that replace a program's own torch.compile arguments (the keys pressed,
    #: the flags given), and the one compiled callable they act on (key o); None: every one.
    toggled: tuple[str, ...] = ()
    toggle_target: str | None = None
    #: Across ranks, the rank the panes show (key o); None: rank 0, the report's top level.
    shown_rank: int | None = None

    @property
    def error(self) -> RunError | None:
        """The error of the newest run, if it failed."""
        return self.attempt.error if self.attempt is not None else None

    @property
    def torch_version(self) -> str | None:
        return self.hello.torch_version if self.hello is not None else None
