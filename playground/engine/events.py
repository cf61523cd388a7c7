"""What a run gives its caller: typed events while it runs, and one `RunResult` at the end.

The worker speaks JSON over its pipe; the client turns each message into one of these at the
seam (playground/engine/client.py), so every front end (check, watch, matrix, the app) reads
fields, never dict keys. Torch-free.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from playground.engine.report import Fix, Report


@dataclass(frozen=True)
class ProgressEvent:
    """What the run is doing now. `step`: "queued" (the client sent it), then as the worker
    says: "loading", "compiling" (with `call` of `calls`), "reference", "equivalence",
    "timing", "dynamo_code"; `message` words it."""

    step: str = ""
    call: int | None = None
    calls: int | None = None
    message: str = ""


@dataclass(frozen=True)
class DiagnosticsEvent:
    """The calls have run: breaks, guards and recompiles are known; equivalence and timings
    are not yet (`report.stage == "diagnostics"`)."""

    report: Report


@dataclass(frozen=True)
class FindingsEvent:
    """What Dynamo found in the run's calls, from the run's findings lane (a process beside the
    run that makes the same calls with backend "eager" and only the capture), sent while a slow
    backend still compiles: graphs, breaks, guards and recompiles (`report.stage == "findings"`,
    its settings the run's own). The complete report supersedes it (playground/engine/findings.py
    says where the two differ). Also the pipe's message: `to_dict`/`from_dict`."""

    report: Report
    #: The backend the lane traced with, and the one the run is still compiling with.
    lane_backend: str = "eager"
    run_id: Any = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "event": "findings",
            "id": self.run_id,
            "lane_backend": self.lane_backend,
            "report": self.report.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FindingsEvent | None:
        """The "findings" message `data` is, or None for another message (or one without a report)."""
        if data.get("event") != "findings" or not isinstance(data.get("report"), dict):
            return None
        return cls(
            report=Report.from_dict(data["report"]),
            lane_backend=str(data.get("lane_backend") or "eager"),
            run_id=data.get("id"),
        )


@dataclass(frozen=True)
class RestartEvent:
    """The worker had died and was started again before this run (the torch import paid again)."""

    reason: str = ""


@dataclass(frozen=True)
class FixEvent:
    """A run that tries fixes: its own report (`fix` None, once, when the run itself is done),
    then one remedy's result as each variant ends."""

    report: Report | None = None
    fix: Fix | None = None


@dataclass(frozen=True)
class Tracing:
    """Where Dynamo was tracing the snippet when a progress message was sent: its line, and
    how many calls deep (the worker's tracer watch samples it)."""

    line: int
    depth: int


@dataclass(frozen=True)
class Progress:
    """A progress message on the worker's pipe, in its one shape: every sender in the worker
    builds one and sends `to_dict()`, every reader (the client, its record of a run's last
    words, the worker's own witnesses) reads `from_dict`. `run_id` is the pipe's `id` (None
    until the child that owns the channel stamps it); `phase` what the run does now."""

    phase: str = ""
    call: int | None = None
    calls: int | None = None
    message: str = ""
    tracing: Tracing | None = None
    run_id: Any = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"event": "progress"}
        if self.run_id is not None:
            data["id"] = self.run_id
        data.update(phase=self.phase, call=self.call, calls=self.calls, message=self.message)
        if self.tracing is not None:
            data["tracing"] = {"line": self.tracing.line, "depth": self.tracing.depth}
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Progress | None:
        """The progress message `data` is, or None when it is another message. A field of the
        wrong type reads as absent: the pipe also carries what a snippet forged on it."""
        if data.get("event") != "progress":
            return None
        tracing = data.get("tracing")
        where = None
        if isinstance(tracing, dict) and _whole(tracing.get("line")) and _whole(tracing.get("depth")):
            where = Tracing(tracing["line"], tracing["depth"])
        return cls(
            phase=str(data.get("phase") or ""),
            call=data["call"] if _whole(data.get("call")) else None,
            calls=data["calls"] if _whole(data.get("calls")) else None,
            message=str(data.get("message") or ""),
            tracing=where,
            run_id=data.get("id"),
        )

    def event(self) -> ProgressEvent:
        """What a caller of the client sees of it."""
        return ProgressEvent(step=self.phase, call=self.call, calls=self.calls, message=self.message)


@dataclass(frozen=True)
class RunEnded:
    """The template's word that a run's child ended without a report (or after it): `outcome`
    ("ok", "died", "timeout", "cancelled"), and how the process ended, by `signal` name or
    `returncode`; `eager_failed_call` and `eager_error` (the error as the report's RunError
    dict) when the run died on a call where its eager reference raised too."""

    outcome: str = ""
    pid: int | None = None
    signal: str | None = None
    returncode: int | None = None
    eager_failed_call: int | None = None
    eager_error: dict[str, Any] | None = None
    run_id: Any = None

    @classmethod
    def of(cls, outcome: str, status: dict[str, Any], run_id: Any = None) -> RunEnded:
        """From the template's wait: the outcome and the status dict its reaping wrote."""
        return cls.from_dict({"event": "ended", "id": run_id, "outcome": outcome, **status}) or cls(outcome)

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"event": "ended", "id": self.run_id, "outcome": self.outcome, "pid": self.pid}
        if self.signal is not None:
            data["signal"] = self.signal
        else:
            data["returncode"] = self.returncode
        if self.eager_error is not None:
            data["eager_failure"] = {"failed_call": self.eager_failed_call, "error": self.eager_error}
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunEnded | None:
        """The "ended" message `data` is, or None for another message."""
        if data.get("event") != "ended":
            return None
        eager = data.get("eager_failure")
        eager = eager if isinstance(eager, dict) and isinstance(eager.get("error"), dict) else {}
        return cls(
            outcome=str(data.get("outcome") or ""),
            pid=data["pid"] if _whole(data.get("pid")) else None,
            signal=str(data["signal"]) if data.get("signal") is not None else None,
            returncode=data["returncode"] if _whole(data.get("returncode")) else None,
            eager_failed_call=eager["failed_call"] if _whole(eager.get("failed_call")) else None,
            eager_error=eager.get("error"),
            run_id=data.get("id"),
        )


@dataclass(frozen=True)
class BisectProgress:
    """A progress message on the bisection's channel, sent as a step starts: its number `steps`,
    where torch's bisector stands (the backend it tests as `stage`, the `subsystem`, its run
    `state`, "test_disable", "find_max_bounds" or "bisect", the range `low..high` left, and
    `change`, the one config switch a subsystem's step sets) and, once it is halving a range,
    `at_most`, the most steps the bisection can take. The bisection's process sends `to_dict()`;
    every reader (`playground.engine.bisecting`, so `bisect` and the app) reads `from_dict`."""

    steps: int
    stage: str | None = None
    subsystem: str | None = None
    low: int | None = None
    high: int | None = None
    state: str | None = None
    change: str | None = None
    at_most: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "event": "progress",
            "steps": self.steps,
            "at_most": self.at_most,
            **{key: getattr(self, key) for key in ("stage", "subsystem", "state", "change", "low", "high")},
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BisectProgress | None:
        """The progress message `data` is, or None for another message; a field of the wrong
        type reads as absent."""
        if data.get("event") != "progress":
            return None

        def number(key: str) -> int | None:
            return data[key] if _whole(data.get(key)) else None

        def text(key: str) -> str | None:
            value = data.get(key)
            return value if isinstance(value, str) and value else None

        return cls(
            number("steps") or 0,
            text("stage"),
            text("subsystem"),
            number("low"),
            number("high"),
            text("state"),
            text("change"),
            number("at_most"),
        )

    def words(self) -> str:
        """ "step 9 of at most 12: inductor post_grad_passes, range 0..7"; before a range is
        halved, what the step tries: "try backend aot_eager", "inductor: try without
        post_grad_passes", "inductor: try inductor.fallback_random=True"."""
        bound = f" of at most {self.at_most}" if self.at_most is not None else ""
        if self.state == "test_disable":
            what = f"{self.stage}: try {self.change or f'without {self.subsystem}'}"
        elif self.state == "find_max_bounds":
            what = f"{self.stage}: count the {self.subsystem} applied"
        elif self.stage and not self.subsystem:
            what = f"try backend {self.stage}"
        else:
            what = " ".join(w for w in (self.stage, self.subsystem) if w) or "starting"
        span = f", range {self.low}..{self.high}" if self.low is not None and self.high is not None else ""
        return f"step {self.steps}{bound}: {what}{span}"


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


RunEvent = ProgressEvent | DiagnosticsEvent | FindingsEvent | RestartEvent | FixEvent
EventHandler = Callable[[RunEvent], Any]


@dataclass(frozen=True)
class Trace:
    """torch's structured trace of one run (asked for with `trace=True`), kept apart from the
    report: it is for tlparse, never part of the JSON contract. `strings` is torch's interned
    string table as (text, index) pairs; `lines` the trace records in TORCH_TRACE's format."""

    lines: tuple[str, ...] = ()
    strings: tuple[tuple[str, int], ...] = ()

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Trace | None:
        if not data:
            return None
        return cls(
            lines=tuple(str(line) for line in data.get("lines") or ()),
            strings=tuple((str(text), int(index)) for text, index in data.get("strings") or ()),
        )

    def to_dict(self) -> dict[str, Any]:
        return {"lines": list(self.lines), "strings": [list(pair) for pair in self.strings]}


@dataclass(frozen=True)
class RunResult:
    """One run's outcome: the report (errors are data in `report.error`) and, when asked for,
    the trace."""

    report: Report
    trace: Trace | None = None
