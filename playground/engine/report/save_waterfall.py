"""A save's waterfall: where the time went from the client's request to the report, phase by
phase, measured in the run itself (the worker's recorder: playground/worker/run/spine/waterfall.py).
Torch-free."""

from __future__ import annotations

from dataclasses import dataclass

from playground.engine.report.wire import Wire, absent_if_none, wire

#: The phases in the order a run meets them. "request" (the client's send to the template's
#: receipt) and "fork" (receipt to the run's start in its child, or the spare child's handover)
#: happen before the run ("fork" also holds any wait behind a run still going, and for the spare
#: child its wait to be ready); "trace" (Dynamo) and "backend" (the backend's compile) lie inside
#: "calls" and are torch's own compile metrics summed over the calls, laid end to end from the
#: calls' start; "diagnostics" is reading them and sending the first-findings event; then the
#: wait for the eager "reference", "equivalence" and "timing".
WATERFALL_PHASES: tuple[str, ...] = (
    "request",
    "fork",
    "load",
    "trace",
    "backend",
    "calls",
    "diagnostics",
    "reference",
    "equivalence",
    "timing",
)

#: Phases that lie inside another one (never added to the sequence's sum).
INSIDE_PHASES: dict[str, str] = {"trace": "calls", "backend": "calls"}


@dataclass(frozen=True)
class WaterfallPhase(Wire):
    """One phase: its start and duration in ms from the waterfall's origin."""

    name: str = ""
    start_ms: float = 0.0
    duration_ms: float = 0.0

    @property
    def end_ms(self) -> float:
        return self.start_ms + self.duration_ms


@dataclass(frozen=True)
class SaveWaterfall(Wire):
    """The phases of one run in order, from `origin`: "sent" (the client's send time, one
    CLOCK_MONOTONIC shared by the client and the worker on one machine) or "received" (the
    template's receipt, when the client sent no time). `total_ms`: origin to the report's end."""

    origin: str = "sent"
    phases: tuple[WaterfallPhase, ...] = ()
    total_ms: float | None = wire(None, omit=absent_if_none("total_ms"))

    def phase(self, name: str) -> WaterfallPhase | None:
        return next((p for p in self.phases if p.name == name), None)

    def sequence_ms(self) -> float:
        """The sum of the phases that follow one another (those inside another left out)."""
        return sum(p.duration_ms for p in self.phases if p.name not in INSIDE_PHASES)
