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
class RestartEvent:
    """The worker had died and was started again before this run (the torch import paid again)."""

    reason: str = ""


@dataclass(frozen=True)
class FixEvent:
    """A run that tries fixes: its own report (`fix` None, once, when the run itself is done),
    then one remedy's result as each variant ends."""

    report: Report | None = None
    fix: Fix | None = None


RunEvent = ProgressEvent | DiagnosticsEvent | RestartEvent | FixEvent
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
