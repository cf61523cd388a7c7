"""What a run gives its caller: typed events while it runs, and one `RunResult` at the end.

The worker speaks JSON over its pipe; the client turns each message into one of these at the
seam (playground/engine/client.py), so every front end (check, watch, matrix, the app) reads
fields, never dict keys. Torch-free.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from playground.engine.report import Report


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
class RestartEvent:
    """The worker had died and was started again before this run (the torch import paid again)."""

    reason: str = ""


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


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


RunEvent = ProgressEvent | DiagnosticsEvent | RestartEvent
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
