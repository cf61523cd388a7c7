"""The Code pane on a canned report (fixtures/dynamo_code.json: gallery default.py,
eager, on torch 2.13, with Dynamo's code decompiled by depyf): Pilot and a snapshot at 80x24."""

from __future__ import annotations

from tui_fakes import FIXTURES, FakeEngine, canned, load_fixture, pane_text, plain, settle

from playground.engine.report import Report
from tui.factory import make_app
from tui.panes.dynamo_code import NOT_ASKED, PENDING, render_dynamo_code


def app_for_code():
    engine = FakeEngine(canned("dynamo_code"))
    return make_app(FIXTURES / "print_break.py", engine=engine, watch=False, clock=lambda: 0.0)


async def _open_code(pilot) -> None:
    await settle(pilot)
    await pilot.press("0")
    await settle(pilot)


def test_code_pane_80x24(snap_compare):
    assert snap_compare(app_for_code(), terminal_size=(80, 24), run_before=_open_code)


async def test_opening_the_pane_asks_runs_for_dynamos_code():
    app = app_for_code()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert not app.engine.requests[-1].passes.dynamo_code  # off until asked: it costs time
        runs = len(app.engine.runs)
        await _open_code(pilot)
        assert len(app.engine.runs) == runs + 1
        assert app.engine.requests[-1].passes.dynamo_code is True
        text = pane_text(app, "dynamo_code")
    assert "resume function  torch_dynamo_resume_in_fn_at_33  resumes after the break at line 33" in text
    assert "transformed code  __transformed_code_0_for_fn" in text
    assert "guard function  __guard_0_for_fn" in text


def test_pane_without_the_field_says_how_to_get_it():
    raw = load_fixture("dynamo_code")
    raw.pop("dynamo_code")
    raw.pop("dynamo_code_note")  # a run that did not ask has no note either
    assert plain(render_dynamo_code(Report.from_dict(raw))).split() == NOT_ASKED.split()


def test_pane_while_the_run_goes_on_says_the_code_comes_last():
    # The diagnostics stage never has the code: it comes from a second child after the run.
    raw = load_fixture("dynamo_code")
    raw.pop("dynamo_code")
    raw["stage"] = "diagnostics"
    assert plain(render_dynamo_code(Report.from_dict(raw))).split() == PENDING.split()


def test_pane_without_code_but_with_a_note_shows_the_note():
    raw = load_fixture("dynamo_code")
    raw["dynamo_code"] = None
    raw["dynamo_code_note"] = "depyf is not installed: pip install depyf"
    text = plain(render_dynamo_code(Report.from_dict(raw)))
    assert text.startswith("depyf is not installed") and NOT_ASKED.split()[0] in text


def test_timing_pane_shows_phases():
    from tui.panes.timings import render_timings

    text = plain(render_timings(Report.from_dict(load_fixture("dynamo_code"))), width=120)
    assert "compile time by phase (s)" in text
    assert "0/0 fn line 31" in text and "1/0 torch_dynamo_resume_in_fn_at_33" in text
    assert "torch's compile metrics cover" in text
