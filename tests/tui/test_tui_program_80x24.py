"""The app on a program at 80x24, as a new user meets it (canned reports made from a real
`check --json` of the gallery's train_loop.py, each changed only where the case needs): a guard
with no value (BACKEND_MATCH) stays one line in Recomp, `o` brings Source to the picked callable
with no notice over the bars, a program that raised still shows its equivalence, and Graphs names
the program's own backend, not the session's."""

from __future__ import annotations

import copy
from typing import Any

from tui_fakes import FIXTURES, FakeEngine, bar_text, load_fixture, pane_text, settle

from playground.engine.report import Report
from tui.factory import make_app
from tui.panes.graphs import backend_of
from tui.panes.source import first_mark

PROGRAM = load_fixture("train_loop_program")
#: What torch's guard on the backend reads like: long, and with no value that changed.
BACKEND_GUARD = (
    "___check_obj_id(G['__compiled_fn_backend'], 140230184371904)  "
    "# the compile's backend is not the one this frame was compiled with (BACKEND_MATCH)"
)


def _app(report: dict[str, Any]):
    engine = FakeEngine(lambda text, settings: copy.deepcopy(report))
    return make_app(FIXTURES / "train_loop.py", engine=engine, watch=False, clock=lambda: 0.0), engine


def _backend_match(report: dict[str, Any]) -> dict[str, Any]:
    changed = copy.deepcopy(report)
    for detail in changed["recompile_details"]:
        detail["reasons"] = [
            {"arg": "", "guard": BACKEND_GUARD, "was": "", "now": "", "line": None, "note": "", "entries": ["0/0"]}
        ]
    return changed


async def test_a_guard_with_no_value_is_one_line_of_recomp_not_a_wrapped_table_row() -> None:
    app, _ = _app(_backend_match(PROGRAM))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        lines = pane_text(app, "recompiles").splitlines()
        guard_lines = [line for line in lines if "___check_obj_id" in line]
        assert len(guard_lines) == 2, lines  # one per recompile, each on one line
        assert all("failed:" in line for line in guard_lines)
        assert not any("BACKEND_MATCH" in line and "___check_obj_id" not in line for line in lines), lines
        assert not any(line.strip().startswith("?") for line in lines), lines
        assert not any(" was " in line and " now " in line for line in lines), lines  # no empty table


def test_the_table_keeps_the_rows_that_changed_a_value() -> None:
    from tui_fakes import plain

    from tui.panes.recompiles import render_recompiles

    text = plain(render_recompiles(Report.from_dict(PROGRAM)), width=80)
    assert "was" in text and "now" in text
    assert "4" in text and "2" in text


async def test_o_brings_source_to_the_picked_callable_and_leaves_the_bars_uncovered() -> None:
    app, _ = _app(PROGRAM)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        notices = len(app._notifications)
        await pilot.press("o")
        await settle(pilot)
        assert app.main.view.toggle_target == "Net"
        assert len(app._notifications) == notices, [n.message for n in app._notifications]
        assert bar_text(app).startswith("Net: ")
        report = app.main.view.report
        assert first_mark(report, None, "Net") == 51  # torch.compile(module) at line 51
        assert first_mark(report, None, "loss_fn") == 52
        assert first_mark(report, None, None) is None  # no pick, no break: nothing to bring in


async def test_a_program_that_raised_still_shows_its_equivalence() -> None:
    raised = copy.deepcopy(PROGRAM)
    raised["error"] = {"kind": "snippet", "type": "RuntimeError", "message": "boom after training", "line": 60}
    app, _ = _app(raised)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        equivalence = pane_text(app, "equivalence")
        assert "pending" not in equivalence, equivalence
        assert "identical" in equivalence, equivalence
        assert "error" in bar_text(app)  # the summary still says how it ended


def test_graphs_names_the_programs_own_backend() -> None:
    report = Report.from_dict(PROGRAM)
    assert report.settings.backend == "inductor"  # the session's, which the program did not use
    assert backend_of(report) == "aot_eager"
    toggled = copy.deepcopy(PROGRAM)
    toggled["callables"][0]["toggled"] = {"backend": "aot_eager → eager"}
    assert backend_of(Report.from_dict(toggled)) == "eager, aot_eager"
    plain_snippet = copy.deepcopy(PROGRAM)
    plain_snippet["callables"] = []
    plain_snippet["kind"] = "snippet"
    assert backend_of(Report.from_dict(plain_snippet)) == "inductor"


async def test_the_graphs_pane_of_a_program_says_its_backend() -> None:
    app, _ = _app(PROGRAM)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        graphs = pane_text(app, "graphs")
        assert "handed to the backend (aot_eager)" in graphs, graphs[:300]
        assert "(inductor)" not in graphs
