"""The app shows Dynamo's findings (the findings lane's) while the backend compiles, says which
part is still compiling, keeps them over the run's partial "traced" reports, and when the
complete report replaces them says where the backend changed them. Canned messages, Pilot."""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path

from tui_fakes import FakeEngine, bar_text, canned, settle

from playground.engine.events import DiagnosticsEvent, EventHandler, FindingsEvent, ProgressEvent, RunResult
from playground.engine.report import Report
from playground.engine.run_request import RunRequest
from playground.engine.settings import Settings
from tui.factory import make_app
from tui.widgets.summary_bar import summary_text

INDUCTOR = Settings(backend="inductor")


class LaneEngine(FakeEngine):
    """A run that sends the lane's findings, then holds (`gate`) while the backend compiles,
    then its complete report (`complete_graphs` graphs: the findings say 2)."""

    def __init__(self, complete_graphs: int = 2) -> None:
        super().__init__(canned("break"))
        self.complete_graphs = complete_graphs

    async def run(self, request: RunRequest, on_event: EventHandler | None = None) -> RunResult:
        emit = on_event or (lambda event: None)
        self.requests.append(request)
        report = self.respond("", request.settings)
        report.update(settings=INDUCTOR.to_dict(), graph_count=2)
        findings = copy.deepcopy(report)
        findings.update(stage="findings", equivalence=None, timings=None)
        emit(ProgressEvent("compiling", 1, 2, ""))
        emit(FindingsEvent(Report.from_dict(findings)))
        await asyncio.sleep(0)
        emit(ProgressEvent("compiling", 2, 2, ""))
        traced = copy.deepcopy(findings)
        traced.update(stage="traced", graph_count=1, graph_break_count=0, graph_breaks=[])
        emit(DiagnosticsEvent(Report.from_dict(traced)))
        if self.gate is not None:
            await self.gate.wait()
        report.update(graph_count=self.complete_graphs)
        return RunResult(Report.from_dict(report))


async def test_the_findings_show_with_inductor_compiling_then_the_complete_report_replaces_them(snippet: Path):
    engine = LaneEngine(complete_graphs=2)
    engine.gate = asyncio.Event()
    app = make_app(snippet, engine=engine, watch=False, settings=INDUCTOR)
    async with app.run_test() as pilot:
        for _ in range(50):
            await pilot.pause(0.02)
            if app.main.view.report is not None:
                break
        view = app.main.view
        assert view.report is not None and view.report.stage == "findings"
        # The lane's findings stay up over the run's partial trace, and the bar says what compiles.
        assert view.report.graph_break_count == 1 and view.report.graph_count == 2
        assert view.run.kind == "running" and "inductor compiling…" in view.run.words()
        assert "inductor compiling" in bar_text(app)
        # At 80 columns (78 inside the bar) the state stays on the one line: the short form.
        narrow = summary_text(view, width=78).plain
        assert len(narrow) <= 78 and narrow.endswith("| inductor compiling…"), narrow
        assert summary_text(view).plain.endswith("findings shown; inductor compiling…")
        engine.gate.set()
        await settle(pilot)
        assert app.main.view.report.stage == "complete"
        assert "compiling" not in bar_text(app)
        assert not any("supersedes" in n.message for n in app._notifications)


async def test_a_complete_report_that_differs_from_the_findings_says_so(snippet: Path):
    engine = LaneEngine(complete_graphs=3)
    app = make_app(snippet, engine=engine, watch=False, settings=INDUCTOR)
    async with app.run_test() as pilot:
        await settle(pilot)
        assert app.main.view.report.graph_count == 3
        words = [n.message for n in app._notifications if "supersedes" in n.message]
        assert words and "graphs 2 -> 3" in words[0]


async def test_the_line_of_what_changed_goes_while_a_new_runs_findings_show(snippet: Path):
    engine = LaneEngine(complete_graphs=2)
    app = make_app(snippet, engine=engine, watch=False, settings=INDUCTOR)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("r")
        await settle(pilot)
        assert "#2 since #1" in bar_text(app, "changes")
        engine.gate = asyncio.Event()  # the third run shows its findings, then holds
        await pilot.press("r")
        for _ in range(50):
            await pilot.pause(0.02)
            if app.main.view.report is not None and app.main.view.report.stage == "findings":
                break
        assert app.main.view.report.stage == "findings"
        assert app.main.view.since is None and not app.main.query_one("#changes").display
        engine.gate.set()
        await settle(pilot)
        assert "#3 since #2" in bar_text(app, "changes")
