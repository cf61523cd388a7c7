"""No pane takes more than a frame's work to open on any report: a 10 MB log (a huge line
printed inside `fn` lands in torch's graph_breaks record) froze the Logs pane for a minute, and
the Equiv pane of a snippet with 10,000 calls took 10 s to lay out. Text is capped where it
enters the UI (`tui.engine.intake`), the Equiv tables draw at most `MAX_ROWS` rows, failing ones first."""

from __future__ import annotations

import time

from rich.console import Console
from tui_fakes import FakeEngine, load_fixture, pane_text, plain, settle

from playground.engine.caps import LIMITS
from playground.engine.report import Report
from tui.engine.intake import visible_report
from tui.factory import make_app
from tui.panes.equivalence import MAX_ROWS
from tui.screens.main import _ANALYSIS, _ATTEMPT

CALLS = 10_000
HUGE = "x" * 10_000_000
#: Generous for a loaded CI machine: the panes took 10 s and 68 s on these reports.
PANE_S = 0.75


def big_report() -> dict:
    data = load_fixture("default")
    first = data["equivalence"]["outputs"][0]
    data["equivalence"]["outputs"] = [dict(first, call=n + 1, ok=n != 7777) for n in range(CALLS)]
    data["equivalence"]["ok"] = False
    data["call_entries"] = [dict(data["call_entries"][0], call=n + 1) for n in range(CALLS)]
    data["calls"] = CALLS
    data["logs"]["graph_breaks"] = HUGE
    data["output"]["text"] = HUGE
    return data


def test_every_pane_renders_a_huge_report_in_well_under_a_second():
    report = visible_report(Report.from_dict(big_report()))
    assert len(report.logs.graph_breaks.encode()) <= LIMITS["graph_breaks"]
    kept, marker = report.logs.graph_breaks.rsplit(" … ", 1)
    assert marker == f"{len(HUGE) - len(kept)} more bytes"
    console = Console(width=80)
    for name, render in {**_ANALYSIS, **_ATTEMPT}.items():
        started = time.perf_counter()
        console.render_lines(render(report), console.options.update_width(78), pad=False)
        assert time.perf_counter() - started < PANE_S, name


def test_the_equiv_pane_shows_the_failing_row_and_says_how_many_it_left_out():
    text = plain(_ANALYSIS["equivalence"](visible_report(Report.from_dict(big_report()))))
    assert "7778" in text  # the one failing call, far past the first rows
    assert f"… {CALLS - MAX_ROWS} more rows not shown (all ok)" in text


async def test_the_app_stays_responsive_on_a_huge_report(tmp_path):
    snippet = tmp_path / "snippet.py"
    snippet.write_text("import torch\n")
    data = big_report()
    app = make_app(snippet, engine=FakeEngine(lambda text, settings: data), watch=False)
    app.animation_level = "none"
    async with app.run_test(size=(80, 24)) as pilot:
        started = time.monotonic()
        await settle(pilot, timeout=60)
        await pilot.press("6")
        await pilot.pause()
        assert "more rows not shown" in pane_text(app, "equivalence")
        await pilot.press("8")
        await pilot.pause()
        assert "more bytes" in pane_text(app, "logs")
        # The run, the report's intake, warming the hidden panes, and two switches.
        assert time.monotonic() - started < 10
