"""The History view's sparklines: speedup, compile time, graphs and breaks across a session's
runs, each with its numbers beside it. Five canned runs of snippets/default.py (its canned
report, fixtures/default.json, with the figures a session of edits would see), pinned at 80x24."""

from __future__ import annotations

import copy
import time
from pathlib import Path

import pytest
from textual.widgets import Sparkline, Static
from tui_fakes import canned, load_fixture, settle, snapshot_app

from playground.engine.history import History, trends
from playground.engine.report import Report
from tui.screens.history import HistoryScreen

ROOT = Path(__file__).resolve().parents[2]
#: Per save: speedup, cold compile (s), graphs, breaks; the fourth save's timing not believed.
SAVES = [(0.47, 0.90, 2, 1), (0.52, 0.84, 2, 1), (1.31, 0.41, 1, 0), (None, 0.45, 1, 0), (1.62, 0.38, 1, 0)]


def session() -> History:
    """Five complete runs, a minute apart, the print() line deleted at the third."""
    base = load_fixture("default")
    source = (ROOT / "snippets/default.py").read_text()
    history = History()
    for n, (speedup, compile_s, graphs, breaks) in enumerate(SAVES):
        report = copy.deepcopy(base)
        report["timings"].update(compile_s=compile_s, speedup=speedup or 3.9)
        if speedup is None:
            report["timings"]["unreliable"] = "machine busy: other processes used 1.8 of 2 CPUs meanwhile"
        report.update(graph_count=graphs, graph_break_count=breaks)
        if not breaks:
            report["graph_breaks"] = []
        text = (
            source
            if breaks
            else source.replace('    print("mean of y:", y.mean())  # the graph break: delete this line\n', "")
        )
        history.add(Report.from_dict(report), text, at=n * 60.0)
    return history


def test_trends_are_the_runs_figures_oldest_first_with_their_words():
    speedup, compile_time, graphs, breaks = trends(session().entries)
    # The unreliable run's measured figure is drawn, counted, and never called the speedup.
    assert speedup.values == (0.47, 0.52, 1.31, 3.9, 1.62)
    assert speedup.words == "1.62x now, 0.47x to 3.90x, 1 unreliable"
    newest_doubtful = trends(session().entries[:4])[0]
    assert newest_doubtful.words == "now unreliable, 0.47x to 3.90x, 1 unreliable"
    busy = trends(session().entries[3:4] * 2)[0]  # a busy machine: no speedup to believe
    assert busy.values == (3.9, 3.9) and busy.words == "all 2 unreliable: 3.90x to 3.90x"
    assert compile_time.values == (0.90, 0.84, 0.41, 0.45, 0.38)
    assert compile_time.words == "0.38 s now, 0.38 s to 0.9 s"
    assert graphs.values == (2, 2, 1, 1, 1) and graphs.words == "1 now, 1 to 2"
    assert breaks.values == (1, 1, 0, 0, 0) and breaks.words == "0 now, 0 to 1"


def test_one_run_has_no_range_and_a_failed_run_no_counts():
    speedup, *_ = trends(session().entries[:1])
    assert speedup.words == "0.47x now"
    failed = Report.from_dict(load_fixture("fullgraph_refusal"))
    history = session()
    history.add(failed, "", at=300.0)
    *_, graphs, breaks = trends(history.entries)
    assert graphs.values == (2, 2, 1, 1, 1) and graphs.words == "1 now, 1 to 2 (5 of 6 runs)"


@pytest.fixture
def utc(monkeypatch: pytest.MonkeyPatch) -> None:
    """The runs' clock in the list as UTC wherever the tests run."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def history_app():
    return snapshot_app(canned("default"), "branch.py")


async def open_history(pilot) -> None:
    await settle(pilot)
    await pilot.app.push_screen(HistoryScreen(session()))
    await pilot.pause()


async def test_history_shows_a_sparkline_per_figure_with_its_numbers(utc):
    app = history_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await open_history(pilot)
        screen = app.screen
        lines = {
            row.id: (list(row.query_one(Sparkline).data or []), str(row.query(Static).last().content))
            for row in screen.query(".trend")
        }
    assert lines["trend-speedup"] == ([0.47, 0.52, 1.31, 3.9, 1.62], "1.62x now, 0.47x to 3.90x, 1 unreliable")
    assert lines["trend-compile-time"][0] == [0.90, 0.84, 0.41, 0.45, 0.38]
    assert lines["trend-breaks"] == ([1, 1, 0, 0, 0], "0 now, 0 to 1")


async def test_a_first_run_has_no_sparklines():
    app = history_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        history = History()
        history.add(session().entries[0].report, "", at=0.0)
        await app.push_screen(HistoryScreen(history))
        await pilot.pause()
        assert not app.screen.query(".trend")


def test_history_with_five_saves_80x24(snap_compare, utc):
    assert snap_compare(history_app(), terminal_size=(80, 24), run_before=open_history)
