"""The Code pane, the compile-phase table and the ablation ladder pinned as snapshots on canned
reports (never a live torch run): the Code pane at 160x50, the Timing pane's per-phase table at
80x24, and the matrix screen's ablation ladder (x, then l) at 80x24 and 160x50, its highlighted
row on the stage that diverges."""

from __future__ import annotations

from pathlib import Path

from tui_fakes import FIXTURES, base_report, canned, pressing, settle, snapshot_app

from playground.engine.settings import Settings
from tui.screens.matrix import MatrixScreen

#: Canned compile time by phase per ladder stage (s): Dynamo's part, then the backend's.
PHASES = {
    "eager": (0.19, 0.01),
    "aot_eager": (0.19, 0.35),
    "aot_eager_decomp_partition": (0.19, 1.84),
    "inductor": (0.15, 3.1),
}


def ladder_report(text: str, settings: Settings) -> dict:
    """What torch 2.13 on CPU says of fixtures/log_softmax.py (bitwise tolerance): values agree
    on every stage, the gradient differs at the decomposition stage alone (inductor's kernel
    rounds like eager's again, as seen in tmux)."""
    report = base_report(text, settings)
    bad = settings.backend == "aot_eager_decomp_partition"
    report["equivalence"] = {
        "ok": not bad,
        "outputs": [{"name": "out", "max_abs": 0.0, "max_rel": 0.0, "ok": True}],
        "grads": [
            {"name": "input[0].grad", "max_abs": 1.91e-06 if bad else 0.0, "max_rel": 3.96e-06 if bad else 0.0}
            | {"ok": not bad}
        ],
    }
    dynamo, backend = PHASES.get(settings.backend, (0.19, 0.01))
    report["compile_phase_totals"] = {
        "dynamo_s": dynamo,
        "aot_s": backend,
        "total_s": round(dynamo + backend, 6),
        "first_call_s": round(dynamo + backend, 6),
        "frames": 1,
    }
    return report


def app_for(respond, snippet: str):
    return snapshot_app(respond, snippet)


async def _ladder_on_the_diverging_stage(pilot) -> None:
    """x (the matrix runs to its end), l (the ladder), then down twice: the detail line spells
    out aot_eager_decomp_partition, the first stage that diverges."""
    await settle(pilot)
    await pilot.press("x")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, MatrixScreen) and not screen.running
    await pilot.press("l")
    await settle(pilot)
    assert screen.matrix.ladder and not screen.running and len(screen.matrix.results) == 4
    await pilot.press("down", "down")
    await settle(pilot)


def test_code_pane_160x50(snap_compare):
    app = app_for(canned("dynamo_code"), "print_break.py")
    assert snap_compare(app, terminal_size=(160, 50), run_before=pressing("0"))


def test_timing_pane_phases_80x24(snap_compare):
    app = app_for(canned("dynamo_code"), "print_break.py")
    assert snap_compare(app, terminal_size=(80, 24), run_before=pressing("7"))


def test_ladder_80x24(snap_compare):
    app = app_for(ladder_report, "log_softmax.py")
    assert snap_compare(app, terminal_size=(80, 24), run_before=_ladder_on_the_diverging_stage)


def test_ladder_160x50(snap_compare):
    app = app_for(ladder_report, "log_softmax.py")
    assert snap_compare(app, terminal_size=(160, 50), run_before=_ladder_on_the_diverging_stage)


def test_the_fixture_is_the_gallery_snippets_function():
    """The canned ladder stands for snippets/ladder_log_softmax.py: same function, same bitwise tolerance."""
    gallery = (Path(__file__).resolve().parents[2] / "snippets" / "ladder_log_softmax.py").read_text()
    fixture = (FIXTURES / "log_softmax.py").read_text()
    for line in ('TOLERANCE = {"atol": 0.0, "rtol": 0.0}', "return torch.nn.functional.log_softmax(x, -1)"):
        assert line in gallery and line in fixture
