"""`F`, the fixes screen, on a fake engine at 80x24: the request asks for the Breaks pane's
fixes, each remedy's row comes in as its event arrives, escape cancels through the engine and
keeps the rows, `a` toggles a config remedy on the session's settings (and off again), and the
key refuses politely away from the Breaks and Recomp panes. What the remedies do is the real
worker's (tests/engine/test_fixes.py, tests/test_gallery_fixes.py)."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from textual.widgets import DataTable
from tui_fakes import FakeEngine, plain, settle

from playground.engine.events import FixEvent
from playground.engine.report import Fix, FixAdvice, FixAfter, FixTarget
from tui.factory import make_app
from tui.screens.fixes import FixesScreen, applicable

CONFIG = Fix(
    target=FixTarget("break", 6),
    remedy="config",
    change="torch._dynamo.config.capture_scalar_outputs = True",
    after=FixAfter(3, 1, 0),
    equivalence="ok",
    note="the key torch's hint names",
)
DISABLE = Fix(
    target=FixTarget("break", 6),
    remedy="disable",
    change="@torch.compiler.disable\ndef helper(...): ...",
    after=FixAfter(2, 1, 0),
    equivalence="ok",
    removed=True,
    moved_to=(9,),
)
ADVICE = FixAdvice(FixTarget("break", 6), "Data-dependent branching", "torch.cond(pred, true_fn, false_fn, (x,))")


class FixesEngine(FakeEngine):
    """A run that asks for fixes: its report, then one event per remedy; held before the second
    remedy while `hold` is set, until cancelled."""

    def __init__(self, hold: bool = False) -> None:
        super().__init__()
        self.hold = hold
        self.fix_requests: list[str] = []

    async def run(self, request, on_event=None):
        if not request.passes.fixes:
            return await super().run(request, on_event)
        self.fix_requests.append(request.passes.fixes)
        result = await super().run(request)
        emit = on_event or (lambda event: None)
        emit(FixEvent(report=result.report))
        for n, fix in enumerate((DISABLE, CONFIG)):
            if n == 1 and self.hold:
                self.gate = asyncio.Event()
                try:
                    await super().run(request)  # held here until cancelled: raises RunCancelled
                finally:
                    self.gate = None
            emit(FixEvent(fix=fix))
            await asyncio.sleep(0)
        return replace(result, report=replace(result.report, fixes=(DISABLE, CONFIG), fix_advice=(ADVICE,)))


def rows(screen: FixesScreen) -> list[list[str]]:
    table = screen.query_one(DataTable)
    return [[plain(cell).strip() for cell in table.get_row_at(i)] for i in range(table.row_count)]


def state(screen: FixesScreen) -> str:
    return plain(screen.query_one("#fixes-state").content, width=200).strip()


async def test_f_on_breaks_streams_the_remedies_and_a_toggles_the_config_one(snippet: Path):
    engine = FixesEngine()
    app = make_app(snippet, engine=engine, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("2", "F")
        screen = app.screen
        assert isinstance(screen, FixesScreen)
        for _ in range(50):
            await pilot.pause(0.02)
            if not screen.running:
                break
        assert engine.fix_requests == ["break"]
        assert [r[:3] for r in rows(screen)] == [
            ["break 6", "disable", "moved it to line 9"],
            ["break 6", "config", "did not remove it"],
        ]
        assert "2 remedies tried, best first; a: toggle it on the session; esc closes" in state(screen)
        detail = plain(screen.query_one("#fixes-detail").content, width=200)
        assert "@torch.compiler.disable" in detail and "torch.cond" in detail
        await pilot.press("down", "a")
        await settle(pilot)
        assert dict(app.settings.config) == {"dynamo.capture_scalar_outputs": True}
        assert engine.requests[-1].settings.config == (("dynamo.capture_scalar_outputs", True),)
        # The same remedy again takes it off: a toggle.
        await pilot.press("2", "F")
        for _ in range(50):
            await pilot.pause(0.02)
            if not app.screen.running:
                break
        await pilot.press("down", "a")
        await settle(pilot)
        assert app.settings.config == ()


async def test_escape_cancels_the_variants_and_keeps_the_rows_that_came(snippet: Path):
    engine = FixesEngine(hold=True)
    app = make_app(snippet, engine=engine, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("2", "F")
        screen = app.screen
        for _ in range(100):
            await pilot.pause(0.02)
            if rows(screen):
                break
        assert [r[1] for r in rows(screen)] == ["disable"]
        await pilot.press("escape")
        for _ in range(100):
            await pilot.pause(0.02)
            if not screen.running:
                break
        assert engine.cancels >= 1 and "cancelled: 1 remedy tried" in state(screen)
        assert [r[1] for r in rows(screen)] == ["disable"]
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, FixesScreen)


async def test_f_away_from_breaks_and_recomp_says_where_it_works(snippet: Path):
    engine = FixesEngine()
    app = make_app(snippet, engine=engine, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("1", "F")
        await pilot.pause(0.1)
        assert not isinstance(app.screen, FixesScreen) and engine.fix_requests == []
        assert any("Breaks (2) or Recomp (5)" in str(n.message) for n in app._notifications)


def test_only_a_config_or_dynamic_remedy_applies_to_the_session():
    assert applicable(CONFIG) == ((("dynamo.capture_scalar_outputs", True),), None)
    assert applicable(Fix(remedy="dynamic", change="torch.compile(..., dynamic=True)")) == ((), True)
    assert applicable(DISABLE) is None
    assert applicable(Fix(remedy="config", change="torch._dynamo.config.something = 'text'")) is None


def test_fixes_screen_80x24(snap_compare):
    from tui_fakes import FIXTURES, pressing

    app = make_app(FIXTURES / "branch.py", engine=FixesEngine(), watch=False, clock=lambda: 0.0)
    assert snap_compare(app, terminal_size=(80, 24), run_before=pressing("2", "F"))
