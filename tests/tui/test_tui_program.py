"""The app on a program (a file that calls torch.compile itself), on a canned report that a
real `check --json --max-calls 20 -- --epochs 1000` of the gallery's train_loop.py wrote
(fixtures/train_loop_program.json): the title and the settings bar say how it runs, the Breaks
pane gives each compiled callable its section, `o` aims the toggles at one callable and the
next run's request carries it. Snapshot: the Breaks pane at 80x24."""

from __future__ import annotations

from tui_fakes import FIXTURES, FakeEngine, bar_text, canned, pane_text, plain, pressing, settle, snapshot_app

from tui.factory import make_app
from tui.widgets.summary_bar import title_text


def _app():
    engine = FakeEngine(canned("train_loop_program"))
    return make_app(FIXTURES / "train_loop.py", engine=engine, watch=False, clock=lambda: 0.0), engine


async def test_a_program_shows_its_mode_and_a_section_per_callable() -> None:
    app, engine = _app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert engine.requests[0].program is not None  # the file calls torch.compile: a program
        title = plain(title_text(app.main.view), width=200)
        assert "program" in title
        assert "as written" in bar_text(app, "settings")
        summary = bar_text(app)
        assert "equiv ok" in summary and "stopped" in summary and "speedup" not in summary
        breaks = pane_text(app, "breaks")
        assert "stopped at 20 calls (--max-calls)" in breaks
        assert "Net  torch.compile(module) at line 51" in breaks
        assert "loss_fn  torch.compile(fn) at line 52" in breaks
        assert breaks.count("values: identical against eager") == 2
        assert "steady 8 calls" in breaks and "(0 breaks)" in breaks


async def test_o_aims_the_toggles_at_one_callable_and_the_request_carries_it() -> None:
    app, engine = _app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("o")
        await settle(pilot)
        assert app.pipeline.toggle_target == "Net"
        assert len(engine.requests) == 1  # nothing toggled yet: no rerun
        # The panes show Net alone: its counts, its recompile, its guards; the totals stay in Breaks.
        assert "Net: graphs 2  breaks 0  recompiles 1" in bar_text(app)
        recompiles = pane_text(app, "recompiles")
        assert "forward" in recompiles and "loss_fn" not in recompiles
        assert "graphs 4  breaks 0  recompiles 2" in pane_text(app, "breaks")
        await pilot.press("b")
        await settle(pilot)
        last = engine.requests[-1].program
        assert last is not None and last.only == "Net" and "backend" in last.toggled
        assert "on Net" in bar_text(app, "settings")
        await pilot.press("o", "o")  # Net -> loss_fn -> every callable again
        await settle(pilot)
        assert app.pipeline.toggle_target is None
        assert engine.requests[-1].program.only is None
        assert bar_text(app).startswith("graphs 4")


def test_program_breaks_pane_80x24(snap_compare):
    app = snapshot_app(canned("train_loop_program"), "train_loop.py")
    assert snap_compare(app, terminal_size=(80, 24), run_before=pressing("2"))


def test_the_markdown_export_of_a_program_has_its_sections() -> None:
    from tui_fakes import load_fixture

    from playground.engine.exports import markdown_report
    from playground.engine.report import Report

    text = markdown_report(Report.from_dict(load_fixture("train_loop_program")))
    assert "- settings: `program as written  device=cpu`" in text
    assert "## Program" in text and "stopped at 20 calls (--max-calls)" in text
    assert "Net  torch.compile(module) at line 51" in text and "- values: identical against eager" in text
    assert "backend=inductor" not in text  # the program's own backend holds, not our default
