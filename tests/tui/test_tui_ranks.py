"""The app on a run across ranks, on a canned report that a real `check --json` of the gallery's
ranks/one_rank_recompiles.py wrote (fixtures/one_rank_recompiles.json: 2 ranks, only rank 1
recompiles): the Breaks pane says what differs, and `o` shows the other rank's own facts in every
pane, the Logs and Output panes (built from the run's latest attempt) as well as the others."""

from __future__ import annotations

from pathlib import Path

from tui_fakes import FakeEngine, bar_text, canned, pane_text, settle

from tui.factory import make_app

LESSON = Path(__file__).resolve().parents[2] / "snippets" / "ranks" / "one_rank_recompiles.py"


def _app(engine: FakeEngine | None = None):
    engine = engine or FakeEngine(canned("one_rank_recompiles"))
    return make_app(LESSON, engine=engine, watch=False, clock=lambda: 0.0)


async def test_the_breaks_pane_says_which_rank_differs() -> None:
    app = _app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        breaks = pane_text(app, "breaks")
        assert "only rank 1 recompiled, at call 3" in breaks
        assert "ranks differ" in bar_text(app)  # in words at 80 columns, not a sign
        assert "Recompiling function fn" not in pane_text(app, "logs")  # rank 0 never recompiled


async def test_o_shows_rank_1_in_every_pane_the_logs_too() -> None:
    app = _app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("o")
        await settle(pilot)
        assert app.pipeline.shown_rank == 1
        assert "recompiles 1" in bar_text(app)
        assert "recompiled because x changed 4 -> 3" in pane_text(app, "recompiles")
        assert "Recompiling function fn" in pane_text(app, "logs")
        await pilot.press("o")  # back to rank 0
        await settle(pilot)
        assert "Recompiling function fn" not in pane_text(app, "logs")


async def test_the_code_pane_says_a_run_across_ranks_has_no_code_to_show() -> None:
    app = _app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        code = pane_text(app, "dynamo_code")
        assert "not shown for a run across ranks" in code and "the next run fills it" not in code


async def test_opening_the_code_pane_across_ranks_runs_nothing_again() -> None:
    engine = FakeEngine(canned("one_rank_recompiles"))
    app = _app(engine)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        before = len(engine.requests)
        await pilot.press("0")
        await settle(pilot)
        assert len(engine.requests) == before  # it would not fill the pane
        assert app.passes.dynamo_code  # asked for the next run at ranks 1
