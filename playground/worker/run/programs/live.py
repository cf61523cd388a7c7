"""A running program's live reports: after a call of a compiled callable, at most every
LIVE_INTERVAL_S (sooner when torch logged a graph, a break or a recompile since the last),
progress and the sections so far as a "traced" diagnostics event, so that the app shows a long
loop as it runs and a program whose process dies still has its sections.
Worker-side.
"""

from __future__ import annotations

import time
from dataclasses import replace

from playground.engine.report import Report
from playground.worker.capture import diagnostics
from playground.worker.capture.records import RunCapture
from playground.worker.run.programs.made import Made
from playground.worker.run.programs.program_compiles import CompiledCallables
from playground.worker.run.programs.sections import sections
from playground.worker.run.spine.context import RunContext

#: Seconds between two live reports of a running program (calls, graphs, recompiles so far),
#: at least; and the share of the run's time they may take (a long capture takes longer to read).
LIVE_INTERVAL_S = 0.5
LIVE_SHARE = 0.02
#: Seconds of reports sent early, on news, beyond LIVE_SHARE of the run's time.
NEWS_ALLOWANCE_S = 0.25


class Live:
    """After a call of a compiled callable, at most every LIVE_INTERVAL_S: progress and the
    sections so far as a "traced" diagnostics event (the app shows a long loop as it runs)."""

    def __init__(self, ctx: RunContext, capture: RunCapture, base: Report) -> None:
        self.ctx = ctx
        self.capture = capture
        self.base = base
        self.made: CompiledCallables | None = None
        #: None until the first call: that one is always sent, so that a program whose process
        #: dies soon after still has its first section in the client's report.
        self.last: float | None = None
        self.interval = LIVE_INTERVAL_S
        #: When the first report was sent, the seconds all reports took and the last one took,
        #: and how many of the capture's records the last one had read.
        self.first: float | None = None
        self.spent = 0.0
        self.last_cost = 0.0
        self.seen = 0

    def __call__(self, m: Made) -> None:
        if self.made is None:
            return
        now = time.monotonic()
        due = self.last is None or now - self.last >= self.interval
        if not due and not self._news(now):
            return
        self.last = began = now
        self.first = self.first if self.first is not None else began
        self.seen = len(self.capture.records)
        try:
            self._send(m, self.made)
        finally:
            spent = time.monotonic() - began
            self.spent += spent
            self.last_cost = spent
            # A live report reads the whole capture: never more than LIVE_SHARE of the run's time.
            self.interval = max(LIVE_INTERVAL_S, spent / LIVE_SHARE)

    def _news(self, now: float) -> bool:
        """Whether torch said something since the last report (a graph, a break, a recompile),
        and the reports so far took at most LIVE_SHARE of the run (plus NEWS_ALLOWANCE_S): then it
        is sent before the interval is up, so that a process killed soon after a recompile still
        has it in its report."""
        if len(self.capture.records) == self.seen or self.first is None:
            return False
        # The next report costs about what the last did: sent only if it fits the allowance.
        return self.spent + self.last_cost <= LIVE_SHARE * (now - self.first) + NEWS_ALLOWANCE_S

    def _send(self, m: Made, made: CompiledCallables) -> None:
        try:
            limit = made.bounds.max_calls
            of = f" of {limit}" if limit else ""
            self.ctx.progress(
                "calls", f"running the program: call {made.calls}{of}, {m.name}'s call {m.calls}", made.calls
            )
            early = replace(
                diagnostics.read(self.capture).apply(self.base),
                stage="traced",
                calls=made.calls,
                callables=sections(made),
                notes=tuple(self.ctx.notes),
            )
            self.ctx.emit({"event": "diagnostics", "report": early.to_dict()})
        except Exception:  # noqa: BLE001 - a courtesy must never fail the program
            pass
