"""One run as its front end asks for it: the snippet as read once, its settings, and what the
run measures and adds. Torch-free.

A front end makes one `RunRequest` where the user's choice is known (`check`, `watch` and
`matrix` from their flags, the app from its current run, its keys and its command line) and it
travels whole: the client (playground/engine/client.py) sends `to_dict()` with only its own
wire fields around it (the op, the run's id, its key), and the worker reads it back with
`from_dict` inside its own request (playground/worker/run/spine/request.py). Nobody between spells a
field by its key.

A request whose snippet could not be read, or whose SETTINGS are refused, is still a request:
the client answers it with the report that says why, and never sends it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from playground.engine.passes import NO_PASSES, Passes
from playground.engine.program import ProgramRun
from playground.engine.report import RunError, Wire, WireTypeError, strict_by_default, wire
from playground.engine.report.wire import absent_if_none
from playground.engine.settings import Settings
from playground.engine.snippet import PreparedRun, SnippetSource

#: The seconds a side is timed for at least, unless the run says otherwise (--min-run-time).
DEFAULT_MIN_RUN_TIME_S = 0.2


@dataclass(frozen=True)
class RunFlags(Wire):
    """What a session asks of every run from its command line: whether to time the steady state
    (--no-timing), for how long at least (--min-run-time), and the run's timeout (None: the
    client's own, which `--timeout` sets)."""

    timing: bool = True
    min_run_time: float = DEFAULT_MIN_RUN_TIME_S
    timeout_s: float | None = None
    #: Show Dynamo's findings before a slow backend's complete report (a findings lane beside
    #: the run: playground/engine/findings.py); the app and `watch` ask for it, `check` does not.
    early_findings: bool = False


#: No flags given: timed, for DEFAULT_MIN_RUN_TIME_S a side, under the client's timeout.
DEFAULT_RUN_FLAGS = RunFlags()


class UnreadableSettings(ValueError):
    """A request's settings that do not read: the worker reports why instead of running."""


@dataclass(frozen=True)
class RunRequest:
    """One run: the snippet as its front end read it (`prepared`: its text, the SHA-256 of its
    bytes and its resolved settings, or why it cannot run), the session's flags, the passes
    asked for, whether torch's structured trace comes back, and whether no run follows it."""

    prepared: PreparedRun
    flags: RunFlags = DEFAULT_RUN_FLAGS
    passes: Passes = NO_PASSES
    trace: bool = False
    #: No run follows this one (a one-shot `check`): the worker need not fork a spare child
    #: for the next run, which would only warm itself for a second of CPU and be killed.
    last: bool = False
    #: The file runs as a program (playground/engine/program.py), how; None: as a snippet.
    program: ProgramRun | None = None

    @property
    def path(self) -> str:
        return self.prepared.path

    @property
    def settings(self) -> Settings:
        return self.prepared.settings

    @property
    def text(self) -> str:
        """The snippet's text that runs ("" when it could not be read)."""
        return self.prepared.source.text if self.prepared.source is not None else ""

    @property
    def refusal(self) -> RunError | None:
        """Why this run is answered without the worker: the file cannot run, or its settings
        are refused; None for a run that is sent."""
        return self.prepared.unreadable or self.prepared.error

    @property
    def sendable(self) -> bool:
        """Whether the worker is sent this run: its snippet was read, and nothing refuses it."""
        return self.prepared.source is not None and self.refusal is None

    def to_dict(self) -> dict[str, Any]:
        """The request as the worker reads it; a refused request is never sent (ValueError)."""
        source = self.prepared.source
        if source is None or self.refusal is not None:
            raise ValueError(f"a refused run is never sent to the worker: {self.refusal}")
        sent = _OnTheWire(
            source.path,
            source.text,
            source.sha256,
            self.settings,
            self.flags,
            self.passes,
            self.trace,
            self.last,
            self.program,
        )
        return sent.to_dict()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, *, strict: bool | None = None) -> RunRequest:
        """The request `data` holds (keys beyond it, such as the client's own, are ignored). A
        missing key takes its default; a value of the wrong type is the default, or with
        `strict` (by default STRICT_ENV, as for reports) a WireTypeError. Settings that do
        not read are an UnreadableSettings."""
        if strict is None:
            strict = strict_by_default()
        if not isinstance(data, Mapping):
            if strict and data is not None:
                raise WireTypeError(f"RunRequest: {type(data).__name__} is not an object")
            data = {}
        raw = data.get("settings")
        if strict and raw is not None and not isinstance(raw, Mapping):
            raise WireTypeError(f"RunRequest.settings: {type(raw).__name__} is not an object")
        try:
            settings = Settings.from_dict(raw if isinstance(raw, Mapping) else None)
        except (TypeError, ValueError) as exc:
            raise UnreadableSettings(str(exc)) from exc
        sent = _OnTheWire.from_dict({**data, "settings": None}, strict=strict)
        source = SnippetSource(sent.path, sent.source, sent.sha256)
        prepared = PreparedRun(sent.path, settings, None, sent.sha256, source)
        return cls(prepared, sent.flags, sent.passes, sent.trace, sent.last, sent.program)


@dataclass(frozen=True)
class _OnTheWire(Wire):
    """The request's wire object: one flat JSON object, the flags and the passes among the
    snippet's keys. Its order is the order the keys are written in."""

    path: str = ""
    source: str = ""
    sha256: str = ""
    settings: Settings = field(default_factory=Settings)
    flags: RunFlags = wire(factory=RunFlags, flatten=True)
    passes: Passes = wire(factory=Passes, flatten=True)
    trace: bool = False
    last: bool = False
    program: ProgramRun | None = wire(None, omit=absent_if_none("program"))
