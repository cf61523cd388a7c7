"""One route from a key to a run: a toggle's binding and the palette's command reach the
pipeline through the same verb, so they make the same run request. A toggle is a row of
`tui/run/toggles.py`, whose key the key table makes (`toggle('NAME')`); nothing else names it
(tests/tui/test_tui_new_toggle.py adds one). On a program
the palette's backend is marked toggled as `b`'s is: the settings bar names it and the request
replaces the program's own backend."""

from __future__ import annotations

import inspect

import pytest
from textual.actions import parse
from tui_fakes import FIXTURES, FakeEngine, bar_text, canned, settle

from playground.engine.passes import Passes
from tui.factory import make_app
from tui.keys.commands import BackendCommands, KeyCommands
from tui.keys.table import KEYS
from tui.run.toggles import TOGGLES, toggle_named

#: Every toggle key of the table, by the name its action hands the pipeline.
TOGGLE_KEYS = {parse(key.action)[2][0]: key for key in KEYS if parse(key.action)[1] == "toggle"}


def _program_app():
    engine = FakeEngine(canned("train_loop_program"))
    return make_app(FIXTURES / "train_loop.py", engine=engine, watch=False, clock=lambda: 0.0), engine


def _asked(request):
    """What a run request asks, beside the file's bytes: the same for the same intent."""
    return (request.settings, request.program, request.passes, request.flags, request.trace)


async def _pick(app, provider_class, title: str) -> None:
    """Run the palette's own command for `title`, as the palette runs it once picked."""
    async for hit in provider_class(app.screen).search(title):
        if hit.text == title:
            result = hit.command()
            if inspect.isawaitable(result):
                await result
            return
    raise AssertionError(f"the palette offers no {title!r}")


def test_every_toggle_key_is_a_row_of_the_toggles_table_and_back() -> None:
    assert set(TOGGLE_KEYS) == {toggle.name for toggle in TOGGLES}
    passes = {toggle.name for toggle in TOGGLES if toggle.step is None}
    assert passes <= set(Passes.__dataclass_fields__)


@pytest.mark.parametrize("name", sorted(set(TOGGLE_KEYS) - {"device"}))
async def test_a_toggle_from_its_key_and_from_the_palette_makes_the_same_request(name: str) -> None:
    key = TOGGLE_KEYS[name]
    by_key, key_engine = _program_app()
    async with by_key.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press(key.key)
        await settle(pilot)
        assert len(key_engine.requests) == 2, f"key {key.key} did not rerun"
        from_key = _asked(key_engine.requests[-1])
    by_palette, palette_engine = _program_app()
    async with by_palette.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await _pick(by_palette, KeyCommands, key.title)
        await settle(pilot)
        assert len(palette_engine.requests) == 2, f"the palette's {key.title!r} did not rerun"
        assert _asked(palette_engine.requests[-1]) == from_key
    if toggle_named(name).step is not None and name in ("backend", "fullgraph", "dynamic", "mode"):
        assert name in from_key[1].toggled  # the program's own argument is replaced


async def test_a_backend_from_the_palette_is_toggled_as_b_toggles_it() -> None:
    by_key, key_engine = _program_app()
    async with by_key.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        start = by_key.settings.backend
        presses = 0
        while by_key.settings.backend != "aot_eager" or presses == 0:
            await pilot.press("b")
            await settle(pilot)
            presses += 1
            assert presses <= 4, f"b never reached aot_eager from {start}"
        from_key = _asked(key_engine.requests[-1])
        key_bar = bar_text(by_key, "settings")
    by_palette, palette_engine = _program_app()
    async with by_palette.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await _pick(by_palette, BackendCommands, "Backend: aot_eager")
        await settle(pilot)
        request = palette_engine.requests[-1]
        assert request.program is not None and "backend" in request.program.toggled
        assert request.settings.backend == "aot_eager"
        assert _asked(request) == from_key
        bar = bar_text(by_palette, "settings")
        assert "aot_eager" in bar, bar
        assert bar == key_bar
