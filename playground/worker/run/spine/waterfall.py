"""The save's waterfall, the worker's half: a recorder the run context carries, marked at the
run's phase boundaries (experiment.py), read into the report's `timings.save`
(engine/report/save_waterfall.py). All times are time.monotonic(): CLOCK_MONOTONIC, one clock
for the client and every process of the worker on one Linux machine, so the client's send
time and the template's receipt sit on the same axis as the run's phases. Worker-side, torch-free.
"""

from __future__ import annotations

import time

from playground.engine.report import PhaseTotals, SaveWaterfall, WaterfallPhase
from playground.worker.run.spine.request import WorkerRequest


class Waterfall:
    """Phases as (name, start, end) in monotonic seconds; `origin` the client's send time
    (else the template's receipt, else the run's start)."""

    def __init__(self, request: WorkerRequest, started: float | None = None) -> None:
        self.started = time.monotonic() if started is None else started
        sent, received = request.sent_mono, request.received_mono
        # A time from another clock (a client elsewhere) would put the origin after the run's start.
        if sent is not None and not sent <= self.started:
            sent = None
        if received is not None and not received <= self.started:
            received = None
        self.origin_word = "sent" if sent is not None else "received" if received is not None else "started"
        self.origin = sent if sent is not None else received if received is not None else self.started
        self.spans: list[tuple[str, float, float]] = []
        if sent is not None and received is not None and sent <= received:
            self.spans.append(("request", sent, received))
        if received is not None:
            self.spans.append(("fork", received, self.started))
        self._open: dict[str, float] = {}

    def begin(self, name: str) -> None:
        self._open[name] = time.monotonic()

    def end(self, name: str) -> None:
        began = self._open.pop(name, None)
        if began is not None:
            self.spans.append((name, began, time.monotonic()))

    def compile_inside_calls(self, totals: PhaseTotals | None) -> None:
        """Dynamo's and the backend's time over the calls (torch's compilation_metrics), laid
        end to end from the calls' start: inside the calls, never added to the sequence."""
        calls = next((s for s in self.spans if s[0] == "calls"), None)
        if calls is None or totals is None:
            return
        trace_s = max(totals.dynamo_s, 0.0)
        backend_s = max(totals.total_s - totals.dynamo_s, 0.0)
        self.spans.append(("trace", calls[1], calls[1] + trace_s))
        self.spans.append(("backend", calls[1] + trace_s, calls[1] + trace_s + backend_s))

    def result(self, ended: float | None = None) -> SaveWaterfall:
        ended = time.monotonic() if ended is None else ended
        order = {"trace": 1, "backend": 2}
        spans = sorted(self.spans, key=lambda s: (s[1], order.get(s[0], 0)))
        phases = tuple(
            WaterfallPhase(name, round((a - self.origin) * 1e3, 3), round(max(b - a, 0.0) * 1e3, 3))
            for name, a, b in spans
        )
        return SaveWaterfall(origin=self.origin_word, phases=phases, total_ms=round((ended - self.origin) * 1e3, 3))
