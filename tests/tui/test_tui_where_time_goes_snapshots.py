"""Where the time goes, in the app, pinned at 80x24 and 160x50 on canned reports from real runs
(torch 2.13, `check --json --kernels`): the Breaks pane leading with the distinct breaks of a
break hit in a loop (fixtures/break_in_loop.json), and the Timing pane with the guard cost, what
the compile made and the kernels profile below the timings (fixtures/fused_pointwise.json).
The profile is a pass of its own after the timing, and the screen says so."""

from __future__ import annotations

import pytest
from tui_fakes import canned, pressing, snapshot_app

from tests.tui.test_tui_explain_snapshots import screen_text

SIZES = [(80, 24), (160, 50)]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_breaks_pane_leads_with_the_distinct_breaks(snap_compare, size):
    app = snapshot_app(canned("break_in_loop"), "break_in_loop.py")
    assert snap_compare(app, terminal_size=size, run_before=pressing("2"))


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_timing_pane_with_the_kernels_profile(snap_compare, size):
    app = snapshot_app(canned("fused_pointwise"), "fused_pointwise.py")
    assert snap_compare(app, terminal_size=size, run_before=pressing("7"))


async def test_the_timing_pane_never_draws_the_profile_as_part_of_the_timing():
    app = snapshot_app(canned("fused_pointwise"), "fused_pointwise.py")
    async with app.run_test(size=(160, 50)) as pilot:
        await pressing("7")(pilot)
        screen = screen_text(app)
    assert screen.index("steady state") < screen.index("kernels of call 1, profiled in a pass of their own")
    assert "guards: " in screen and "what each compile made" in screen
