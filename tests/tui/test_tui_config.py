"""Torch's switches in the app (settings bar, palette) and the matrix screen's ladder view,
on a fake engine with canned results."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable
from tui_fakes import FakeEngine, bar_text, base_report, plain, settle

from playground.engine.settings import Settings
from tui.factory import make_app
from tui.keys.commands import SwitchCommands
from tui.screens.matrix import MatrixScreen
from tui.widgets.summary_bar import settings_text


def test_settings_bar_shows_switches_only_when_set():
    assert "stance" not in plain(settings_text(Settings()), width=300)
    s = Settings(config=(("dynamo.capture_scalar_outputs", True),), stance="fail_on_recompile")
    text = plain(settings_text(s), width=300)
    assert "dynamo.capture_scalar_outputs=True" in text and "stance=fail_on_recompile" in text


async def test_palette_sets_a_config_key_and_reruns(snippet: Path):
    engine = FakeEngine()
    app = make_app(snippet, engine=engine, watch=False, clock=lambda: 0.0)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        provider = SwitchCommands(app.screen)
        titles = [title for title, _, _ in provider._choices()]
        assert "Config: dynamo.capture_scalar_outputs = True" in titles and "Stance: fail_on_recompile" in titles
        dict(((t, run) for t, _, run in provider._choices()))["Config: dynamo.capture_scalar_outputs = True"]()
        await settle(pilot)
        assert engine.runs[-1][1].config == (("dynamo.capture_scalar_outputs", True),)
        typed = provider._typed("dynamo.recompile_limit=4")
        assert typed is not None
        typed[2]()
        await settle(pilot)
        assert dict(engine.runs[-1][1].config) == {"dynamo.capture_scalar_outputs": True, "dynamo.recompile_limit": 4}
        assert "Config: unset dynamo.recompile_limit" in [t for t, _, _ in provider._choices()]
        assert provider._typed("no equals sign") is None


def ladder_report(text: str, settings: Settings) -> dict:
    """Canned: values agree everywhere, gradients stop agreeing from the decomposition stage."""
    report = base_report(text, settings)
    bad = settings.backend in ("aot_eager_decomp_partition", "inductor")
    report["equivalence"] = {
        "ok": not bad,
        "outputs": [{"name": "output", "max_abs": 0.0, "max_rel": 0.0, "ok": True}],
        "grads": [{"name": "x", "max_abs": 1.9e-06 if bad else 0.0, "max_rel": 4e-06 if bad else 0.0, "ok": not bad}],
    }
    return report


@pytest.mark.parametrize("size", [(80, 24), (160, 50)])
async def test_matrix_screen_ladder_names_the_first_stage(snippet: Path, size: tuple[int, int]):
    engine = FakeEngine(ladder_report)
    app = make_app(snippet, engine=engine, watch=False, clock=lambda: 0.0)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("x")
        screen = app.screen
        assert isinstance(screen, MatrixScreen)
        await settle(pilot)
        await pilot.press("l")
        await settle(pilot)
        for _ in range(200):
            if not screen.running:
                break
            await pilot.pause(0.01)
        assert screen.matrix.ladder and len(screen.matrix.results) == 4
        rows = [plain(screen.query_one(DataTable).get_row(str(i))[0]).strip() for i in range(4)]
        assert rows == ["eager", "aot_eager", "aot_eager_decomp_partition", "inductor"]
        verdict = plain(screen.query_one("#matrix-verdict").content, width=300)
        assert "first divergence: aot_eager_decomp_partition: gradients differ" in verdict
        assert "1.9e-06" in verdict
        assert verdict.strip() in plain(screen.query_one("#matrix-verdict").render(), width=size[0] * 3)
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(app.screen, MatrixScreen)


def test_settings_bar_names_the_target_only_when_set():
    assert "target" not in plain(settings_text(Settings()), width=300)
    text = plain(settings_text(Settings(backend="aot_eager", target="fn"), width=78), width=300)
    assert text.rstrip().endswith("c cpu  target=fn"), text


async def test_a_snippet_choosing_its_target_shows_it_on_the_settings_bar(snippet: Path):
    snippet.write_text(
        snippet.read_text().replace('"backend": "eager"}', '"backend": "eager", "target": "fn"}'), encoding="utf-8"
    )
    engine = FakeEngine()
    app = make_app(snippet, engine=engine, watch=False, clock=lambda: 0.0)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert app.settings.target == "fn"
        assert engine.runs and engine.runs[-1][1].target == "fn"
        assert "target=fn" in bar_text(app, "settings")
