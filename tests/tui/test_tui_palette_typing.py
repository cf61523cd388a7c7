"""The palette never runs a command the user did not pick, and stays responsive however much is
typed into it. Keys are posted as a terminal delivers them, all at once, not one Pilot press at a
time: 3,000 characters kept the app busy for 65 s (the input's redraw grows with its length), and
Enter, handled before the keys queued ahead of it, ran the top entry of a stale list (Help)."""

from __future__ import annotations

import time
from pathlib import Path

from textual import events
from textual.command import CommandInput
from tui_fakes import FIXTURES, FakeEngine, settle

from tui.factory import make_app
from tui.keys.palette import MAX_QUERY, PlaygroundPalette


def _type(app, text: str) -> None:
    for char in text:
        app.post_message(events.Key(char, char))


async def _wait(pilot, predicate, seconds: float) -> float:
    started = time.monotonic()
    while not predicate():
        assert time.monotonic() - started < seconds, "the app did not get there in time"
        await pilot.pause(0.05)
    return time.monotonic() - started


def _app(tmp_path: Path):
    snippet = tmp_path / "branch.py"
    snippet.write_text((FIXTURES / "branch.py").read_text())
    engine = FakeEngine()
    return make_app(snippet, engine=engine, watch=False), engine


async def test_six_thousand_typed_characters_then_enter_run_nothing(tmp_path: Path):
    app, engine = _app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        settings, runs, pane = app.settings, len(engine.runs), app.main.deck.current
        await pilot.press("ctrl+p")
        await _wait(pilot, lambda: isinstance(app.screen, PlaygroundPalette), 5)
        _type(app, "dynamic" + "9" * 5993)
        app.post_message(events.Key("enter", "\r"))
        # Every key handled (the input holds what it takes) in seconds, not minutes.
        palette = app.screen
        await _wait(pilot, lambda: len(palette.query_one(CommandInput).value) == MAX_QUERY, 20)
        await _wait(pilot, lambda: not palette.searching, 10)
        await pilot.pause(0.5)
        assert app.screen is palette, f"Enter ran something: now on {type(app.screen).__name__}"
        assert (app.settings, len(engine.runs), app.main.deck.current) == (settings, runs, pane)
        await pilot.press("escape")
        assert not isinstance(app.screen, PlaygroundPalette)


async def test_a_command_typed_at_full_speed_still_runs_on_enter(tmp_path: Path):
    app, engine = _app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        before = app.settings.dynamic
        await pilot.press("ctrl+p")
        await _wait(pilot, lambda: isinstance(app.screen, PlaygroundPalette), 5)
        _type(app, "cycle dynamic")
        app.post_message(events.Key("enter", "\r"))  # the first result of this text: the only one
        await _wait(pilot, lambda: not isinstance(app.screen, PlaygroundPalette), 10)
        await settle(pilot)
        assert app.settings.dynamic != before
