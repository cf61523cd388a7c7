"""`s` from a failing Equiv verdict under Pilot, with a fake bisector (no torch): the screen
shows each step as it arrives, then what was found and the workaround; `a` applies the
workaround's config to the app's settings and reruns with it; escape cancels a running
bisection (the bisector is cancelled, which in the real one kills its process group); on a
passing verdict or a program, `s` says why there is nothing to bisect. Snapshot: the result at
80x24. The real bisector's cancel is tests/engine/test_bisecting.py."""

from __future__ import annotations

import asyncio

from tui_fakes import FIXTURES, FakeEngine, canned, settle

from playground.engine.events import BisectProgress
from playground.engine.report.bisection import Bisection, BisectResult, DivergingOp
from tui.factory import make_app
from tui.screens.bisect import BisectScreen

FOUND = BisectResult(
    Bisection(
        backend="inductor",
        subsystem="inductor_fallback_random",
        bisect_number=1,
        debug_info="aten.rand_like",
        line=12,
        workaround={"config": {"inductor.fallback_random": True}},
        steps=5,
        first_diverging_op=DivergingOp(
            op="torch.rand", how="every intermediate an output", node="rand", line=12, graph=0, max_abs_diff=0.79
        ),
    )
)


class FakeBisector:
    """Steps, then FOUND; or, with `hold`, never ends until cancelled."""

    def __init__(self, *, hold: bool = False) -> None:
        self.hold = hold
        self.calls: list[tuple[str, tuple]] = []
        self.settings: list[dict] = []
        self.cancelled = False

    async def __call__(self, path, config, on_step, settings=()):
        self.calls.append((path, config))
        self.settings.append(dict(settings))
        for n in (1, 2, 3):
            on_step(BisectProgress(n, "bisecting", "inductor_fallback_random", 0, 4 - n))
            await asyncio.sleep(0)
        if self.hold:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.cancelled = True
                raise
        return FOUND


def _app(fixture: str, snippet: str, bisector):
    engine = FakeEngine(canned(fixture))
    return make_app(FIXTURES / snippet, engine=engine, watch=False, clock=lambda: 0.0, bisector=bisector), engine


async def _until(pilot, predicate, timeout: float = 5.0) -> None:
    for _ in range(int(timeout / 0.02)):
        if predicate():
            return
        await pilot.pause(0.02)
    raise AssertionError("timed out")


async def test_s_on_a_fail_bisects_live_and_a_applies_the_workaround() -> None:
    bisector = FakeBisector()
    app, engine = _app("equivalence_fail", "bf16_sum.py", bisector)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("s")
        await _until(pilot, lambda: isinstance(app.screen, BisectScreen) and not app.screen.running)
        screen = app.screen
        assert [s.steps for s in screen.steps] == [1, 2, 3]
        assert bisector.calls == [(str(FIXTURES / "bf16_sum.py"), ())]
        shown = str(screen.query_one("#bisect-result").render())
        assert "found: backend inductor, subsystem inductor_fallback_random" in shown
        assert "snippet line: 12" in shown and "inductor.fallback_random=true" in shown
        assert "first diverging op: torch.rand (line 12), max |eager - compiled| 0.79" in shown
        before = len(engine.requests)
        await pilot.press("a")
        await settle(pilot)
        assert not isinstance(app.screen, BisectScreen)
        assert ("inductor.fallback_random", True) in app.settings.config
        assert len(engine.requests) == before + 1
        assert ("inductor.fallback_random", True) in engine.requests[-1].settings.config


async def test_the_bisection_judges_under_the_settings_the_verdict_ran_under() -> None:
    """What the app was showing (the snippet's SETTINGS and the keys pressed since) reaches the
    bisection: its steps compile as the failing run did, not as the file alone says."""
    bisector = FakeBisector()
    app, engine = _app("equivalence_fail", "bf16_sum.py", bisector)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f", "d")  # fullgraph on; dynamic auto -> true
        await settle(pilot)
        await pilot.press("s")
        await _until(pilot, lambda: isinstance(app.screen, BisectScreen) and not app.screen.running)
        (settings,) = bisector.settings
        assert settings["fullgraph"] is True and settings["fullgraph"] == engine.requests[-1].settings.fullgraph
        assert settings["dynamic"] == engine.requests[-1].settings.dynamic is not None
        assert set(settings) == {"fullgraph", "dynamic", "mode", "target"}


async def test_escape_cancels_a_running_bisection() -> None:
    bisector = FakeBisector(hold=True)
    app, _ = _app("equivalence_fail", "bf16_sum.py", bisector)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("s")
        await _until(pilot, lambda: isinstance(app.screen, BisectScreen) and len(app.screen.steps) == 3)
        await pilot.press("a")  # nothing to apply yet
        assert isinstance(app.screen, BisectScreen)
        await pilot.press("escape")
        await _until(pilot, lambda: bisector.cancelled)
        assert not app.screen.running
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, BisectScreen)


async def test_s_on_a_pass_or_a_program_says_why_not() -> None:
    bisector = FakeBisector()
    app, _ = _app("default", "branch.py", bisector)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("s")
        await pilot.pause()
        assert not isinstance(app.screen, BisectScreen) and bisector.calls == []
        assert any("nothing to bisect" in n.message for n in app._notifications)
    app, _ = _app("train_loop_program", "train_loop.py", bisector)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("s")
        await pilot.pause()
        assert not isinstance(app.screen, BisectScreen) and bisector.calls == []
        assert any("not a program" in n.message for n in app._notifications)


def test_bisect_result_80x24(snap_compare):
    app, _ = _app("equivalence_fail", "bf16_sum.py", FakeBisector())

    async def run_before(pilot) -> None:
        await settle(pilot)
        await pilot.press("s")
        await _until(pilot, lambda: isinstance(app.screen, BisectScreen) and not app.screen.running)

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


def test_a_config_switch_is_found_without_a_count_or_debug_info() -> None:
    """Torch's bisector answers a subsystem that is one switch (a ConfigChange) with number 0 and
    the subsystem's own name as its debug info: neither is news, so neither is said."""
    from tui.screens.bisect import result_words

    switch = Bisection(
        backend="inductor",
        subsystem="inductor_fallback_random",
        bisect_number=0,
        debug_info="inductor_fallback_random",
        workaround={"config": {"inductor.fallback_random": True}},
        steps=9,
    )
    words = result_words(BisectResult(switch))
    assert words[0] == "found: backend inductor, subsystem inductor_fallback_random"
    assert not [w for w in words if "application number" in w or "debug info" in w]
    counted = result_words(BisectResult(FOUND.bisection))
    assert [w for w in counted if "application number 1" in w] and "torch's debug info: aten.rand_like" in counted


async def test_a_applies_a_list_valued_workaround_the_decomposition_key() -> None:
    """The decomposition lesson's workaround is the playground's own key with a list of op
    names (worker/run/spine/decomp_table.py): applied, it is the settings' config as a --config would
    give it (hashable, shown in words), and the rerun carries it."""
    key = "playground.without_decompositions"
    found = BisectResult(
        Bisection(
            backend="aot_eager_decomp_partition",
            subsystem="decomposition",
            bisect_number=0,
            debug_info="<OpOverload(op='aten.sin', overload='default')>",
            line=33,
            workaround={"config": {key: ["aten.sin.default"]}},
            steps=7,
        )
    )

    async def bisector(path, config, on_step, settings=()):
        return found

    app, engine = _app("equivalence_fail", "bf16_sum.py", bisector)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("s")
        await _until(pilot, lambda: isinstance(app.screen, BisectScreen) and not app.screen.running)
        shown = str(app.screen.query_one("#bisect-result").render())
        assert f'{key}=["aten.sin.default"]' in shown
        await pilot.press("a")
        await settle(pilot)
        assert not isinstance(app.screen, BisectScreen)
        assert (key, ("aten.sin.default",)) in app.settings.config
        hash(app.settings)
        assert (key, ("aten.sin.default",)) in engine.requests[-1].settings.config
