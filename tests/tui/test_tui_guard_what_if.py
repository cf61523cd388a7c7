"""The guard what-if in the app, by key: `u` makes every run measure what torch's unsafe guard
switches would save (off by default: a recompile under a filter), the settings bar says so, and
the Timing pane shows it. Pilot on the fake engine and a canned report."""

from __future__ import annotations

from tui_fakes import bar_text, canned, pane_text, settle, snapshot_app

from playground.cli.main import parse
from playground.engine.passes import Passes
from tests.engine.test_wording_guard_what_if import MODULE

SNIPPET = "fused_pointwise.py"


async def test_u_makes_the_runs_measure_the_what_if_and_says_so_in_the_settings_bar():
    app = snapshot_app(canned("fused_pointwise"), SNIPPET)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert not app.engine.requests[-1].passes.guard_what_if  # off by default: it recompiles
        await pilot.press("u")
        await settle(pilot)
        assert len(app.engine.runs) == 2  # reran at once
        assert app.engine.requests[-1].passes == Passes(guard_what_if=True)
        assert bar_text(app, "settings").strip().endswith("u what-if on")
        await pilot.press("k")
        await settle(pilot)
        assert app.engine.requests[-1].passes == Passes(kernels=True, guard_what_if=True)  # both, every run
        bar = bar_text(app, "settings").strip()
        # at 80 columns the shortest forms, `k on u on`, as `f off` is the short `f full off`
        assert bar.endswith("k on u on") or bar.endswith("k kernels on u what-if on"), bar
        await pilot.press("u")
        await settle(pilot)
        assert app.engine.requests[-1].passes == Passes(kernels=True)
        assert "what-if" not in bar_text(app, "settings") and " u " not in bar_text(app, "settings")


async def test_the_timing_pane_shows_the_what_if_of_a_run_that_asked():
    report = canned("fused_pointwise")

    def with_what_if(text, settings):
        raw = report(text, settings)
        raw["guard_what_if"] = MODULE.to_dict()
        return raw

    app = snapshot_app(with_what_if, SNIPPET)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("7")
        await settle(pilot)
        text = " ".join(pane_text(app, "timings").split())
    assert "guard what-if" in text
    assert "skip_guard_on_inbuilt_nn_modules_unsafe" in text
    assert "risk:" in text


def test_the_app_takes_the_view_flags_as_check_and_watch_do():
    for command in ("app", "check", "watch"):
        args = parse(command, ["s.py", "--guard-what-if", "--kernels", "--code"])
        assert args.guard_what_if and args.kernels and args.code
