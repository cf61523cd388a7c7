"""The settings matrix screen on a fake engine: rows fill as cells finish, escape cancels
through the engine and keeps finished rows, closing reruns the normal view."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.widgets import DataTable
from tui_fakes import FakeEngine, bar_text, plain, settle

from playground.engine.matrix import MATRIX_FLAGS
from tui.factory import make_app
from tui.screens.matrix import MatrixScreen


class HoldsMatrixAfter(FakeEngine):
    """Lets `n` matrix cells finish, then holds the next until cancelled. Normal runs (the
    session's flags, not the matrix's) are never held, so the rerun after closing completes."""

    def __init__(self, n: int) -> None:
        super().__init__()
        self.n = n
        self.matrix_runs = 0

    async def run(self, request, on_event=None):
        if request.flags == MATRIX_FLAGS:
            self.matrix_runs += 1
            self.gate = asyncio.Event() if self.matrix_runs > self.n else None
        else:
            self.gate = None
        return await super().run(request, on_event)


def row(screen: MatrixScreen, index: int) -> list[str]:
    return [plain(value).strip() for value in screen.query_one(DataTable).get_row(str(index))]


def state(screen: MatrixScreen) -> str:
    return plain(screen.query_one("#matrix-state").content, width=200).strip()


async def wait_for(pilot, condition, timeout: float = 5.0) -> None:
    for _ in range(int(timeout / 0.01)):
        if condition():
            return
        await pilot.pause(0.01)
    raise AssertionError("condition not reached")


async def test_matrix_fills_cells_and_all_finish(snippet: Path):
    engine = FakeEngine()
    app = make_app(snippet, engine=engine, watch=False, clock=lambda: 0.0)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        normal_runs = len(engine.runs)
        await pilot.press("x")
        screen = app.screen
        assert isinstance(screen, MatrixScreen)
        await settle(pilot)
        assert len(screen.matrix.results) == 12 and not screen.running
        assert "done: 12/12" in state(screen)
        ran = [settings for _, settings in engine.runs[normal_runs:]]
        assert [(s.backend, s.fullgraph, s.dynamic) for s in ran[:3]] == [
            ("eager", False, None),
            ("eager", False, True),
            ("eager", False, False),
        ]
        assert {s.backend for s in ran} == {"eager", "inductor"}
        assert row(screen, 0) == ["eager", "off", "auto", "2", "1", "0", "no", "ok", "0.04s", "2.00x", "no"]
        # fullgraph on refuses the break: raised, in words, and in full under the table.
        assert row(screen, 3)[:3] == ["eager", "on", "auto"] and row(screen, 3)[-1].startswith("Unsupported")
        await pilot.press("down", "down", "down")
        detail = plain(screen.query_one("#matrix-detail").content, width=200)
        assert "eager fullgraph=on dynamic=auto: raised (compile error) Unsupported: Data-dependent" in detail
        assert "paused: settings matrix" in bar_text(app)  # the main view says why it waits
        await pilot.press("f")  # the app's keys do not reach behind the matrix
        assert app.settings.fullgraph is False
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is app.main
        assert engine.runs[-1][1] == app.settings and "done" in bar_text(app) and not app.main.view.stale


async def test_escape_cancels_keeps_finished_rows_and_closing_reruns(snippet: Path):
    engine = HoldsMatrixAfter(3)
    app = make_app(snippet, engine=engine, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("x")
        screen = app.screen
        await wait_for(pilot, lambda: len(screen.matrix.results) == 3 and "running 4/12" in state(screen))
        assert state(screen) == "running 4/12: eager fullgraph=on dynamic=auto"
        assert row(screen, 3)[-1] == "running…" and row(screen, 4)[-1] == "waiting"
        assert row(screen, 2)[3:6] == ["2", "1", "0"]

        await pilot.press("escape")
        await settle(pilot)
        assert engine.cancels >= 1
        assert "cancelled after 3/12: finished rows kept" in state(screen)
        assert sorted(screen.matrix.results) == [0, 1, 2]
        assert row(screen, 3)[-1] == "cancelled" and row(screen, 11)[-1] == "not run"
        assert row(screen, 0)[3:6] == ["2", "1", "0"]
        assert engine.matrix_runs == 4  # nothing ran after the cancel

        runs = len(engine.runs)
        await pilot.press("escape")  # now closes
        await settle(pilot)
        assert app.screen is app.main and len(engine.runs) == runs + 1
        assert "graphs 2  breaks 1" in bar_text(app) and "done" in bar_text(app)


async def test_the_palette_opens_the_matrix(snippet: Path):
    app = make_app(snippet, engine=FakeEngine(), watch=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p", *"matrix")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, MatrixScreen) and len(app.screen.matrix.results) == 12


async def test_quit_while_the_matrix_runs_closes_the_engine(snippet: Path):
    engine = HoldsMatrixAfter(1)
    app = make_app(snippet, engine=engine, watch=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        await pilot.press("x")
        screen = app.screen
        await wait_for(pilot, lambda: "running 2/12" in state(screen))
        await pilot.press("q")  # escape would cancel; q still quits from here
    assert engine.closed
