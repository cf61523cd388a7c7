"""The save's waterfall in the Timing pane, from a canned report of a real run (torch 2.13,
`check --json --backend eager` on fused_pointwise.py: fixtures/fused_pointwise_waterfall.json),
pinned at 80x24 and 160x50: a row per phase in order, the phases inside the calls indented,
the total last."""

from __future__ import annotations

import pytest
from tui_fakes import canned, load_fixture, pressing, snapshot_app

from playground.engine.report import Report
from tests.tui.test_tui_explain_snapshots import screen_text
from tui.panes.timings import render_timings

SIZES = [(80, 24), (160, 50)]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_timing_pane_with_the_save_waterfall(snap_compare, size):
    app = snapshot_app(canned("fused_pointwise_waterfall"), "fused_pointwise.py")
    assert snap_compare(app, terminal_size=size, run_before=pressing("7"))


async def test_the_waterfall_rows_follow_the_run():
    app = snapshot_app(canned("fused_pointwise_waterfall"), "fused_pointwise.py")
    async with app.run_test(size=(160, 50)) as pilot:
        await pressing("7")(pilot)
        screen = screen_text(app)
    assert "save waterfall (ms from the request)" in screen
    waterfall = screen[screen.index("save waterfall") :]
    at = [waterfall.index(f"  {word} ") for word in ("request", "fork", "load", "calls", "diagnostics", "timing")]
    assert at == sorted(at)
    assert screen.index("steady state") < screen.index("save waterfall")
    assert "from the client's send to the report" in screen


def test_a_report_without_a_waterfall_draws_none():
    from rich.console import Console

    data = load_fixture("fused_pointwise_waterfall")
    del data["timings"]["save"]
    console = Console(width=80, record=True)
    console.print(render_timings(Report.from_dict(data)))
    assert "save waterfall" not in console.export_text()
