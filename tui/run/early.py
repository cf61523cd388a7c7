"""Dynamo's findings shown before the complete report: what the run's findings lane sent
(playground/engine/findings.py) while the run's own backend still compiles. The summary bar
says which part is still compiling; the complete report replaces the findings, and says so
where the backend changed them."""

from __future__ import annotations

from dataclasses import replace

from playground.engine.findings import still_compiling, superseded
from playground.engine.report import Report
from tui.run.view import RunState


class EarlyFindings:
    """The findings of the newest run, from their arrival to the run's complete report."""

    def __init__(self) -> None:
        self.report: Report | None = None
        self.generation = -1
        #: The run's own diagnostics came (its backend has compiled every call).
        self.settled = False

    def _open(self, generation: int) -> bool:
        return self.report is not None and generation == self.generation

    def arrived(self, report: Report, generation: int) -> None:
        self.report, self.generation, self.settled = report, generation, False

    def diagnosed(self, report: Report, generation: int) -> bool:
        """The run's own diagnostics: whether they replace what is shown. A "traced" report
        (the graphs traced so far) holds less than the findings and does not."""
        if not self._open(generation):
            return True
        if report.stage == "traced":
            return False
        self.settled = True
        return True

    def state(self, state: RunState, generation: int) -> RunState:
        """The run's state as the summary bar says it: while the findings are shown and the
        backend compiles, which part is still compiling."""
        if not self._open(generation) or self.settled or state.kind != "running" or self.report is None:
            return state
        return replace(state, step="findings", message=still_compiling(self.report.settings.backend))

    def finished(self, report: Report, generation: int) -> str:
        """The complete report came: what it says of the findings shown first ("" when they
        agree, or none were shown)."""
        findings = self.report if self._open(generation) else None
        self.report, self.settled = None, False
        return superseded(findings, report) if findings is not None else ""
