"""Before/after: the history the pipeline keeps, the line and diff after a rerun, and the
history screen comparing any two runs. Fake engine, driven by Pilot."""

from __future__ import annotations

import os
from pathlib import Path

from textual.widgets import OptionList
from tui_fakes import FakeEngine, bar_text, pane_text, plain, settle

from tui.engine.messages import SnippetChanged
from tui.factory import make_app
from tui.screens.history import HistoryScreen


def save(path: Path, text: str) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


async def edit(pilot, path: Path, old: str, new: str) -> None:
    save(path, path.read_text().replace(old, new))
    pilot.app.post_message(SnippetChanged())
    await settle(pilot)


def compare_text(app) -> str:
    from textual.widgets import Static

    return plain(app.screen.query_one("#history-compare").query_one(Static).content)


async def test_an_edit_that_removes_the_break_shows_before_and_after(snippet: Path):
    app = make_app(snippet, engine=FakeEngine(), watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert not app.main.query_one("#changes").display  # a first run has nothing before it
        await edit(pilot, snippet, "if y.sum() > 0:", "if True:")

        assert "#2 since #1: graphs 2 -> 1, breaks 1 -> 0" in bar_text(app, "changes")
        assert app.main.query_one("#changes").display
        breaks = pane_text(app, "breaks")
        assert "run #2 since #1: graphs 2 -> 1, breaks 1 -> 0" in breaks
        assert "-    if y.sum() > 0:" in breaks and "+    if True:" in breaks
        assert "no graph breaks" in breaks
        entries = app.history.entries
        assert [e.report.graph_break_count for e in entries] == [1, 0]
        assert "if True:" in entries[1].source and "if y.sum() > 0:" in entries[0].source

        await pilot.press("h")
        assert isinstance(app.screen, HistoryScreen)
        options = app.screen.query_one(OptionList)
        prompts = [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]
        assert [p.split()[2] for p in prompts] == ["#2", "#1"]  # newest first, after "[ ]"
        # Opened on the newest run against the one before it.
        assert "#1 -> #2: graphs 2 -> 1, breaks 1 -> 0" in compare_text(app)
        assert "+    if True:" in compare_text(app)


async def test_history_compares_two_marked_runs_and_same_settings_pairs(snippet: Path):
    app = make_app(snippet, engine=FakeEngine(), watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("d")  # #2: dynamic=true, never ran before: nothing to compare
        await settle(pilot)
        assert not app.main.query_one("#changes").display
        await edit(pilot, snippet, "if y.sum() > 0:", "if True:")  # #3: since #2
        assert "#3 since #2: graphs 2 -> 1, breaks 1 -> 0" in bar_text(app, "changes")
        for _ in range(2):  # dynamic false (#4), then auto again (#5): since #1
            await pilot.press("d")
            await settle(pilot)
        assert app.settings.dynamic is None
        assert "#5 since #1: graphs 2 -> 1, breaks 1 -> 0" in bar_text(app, "changes")

        await pilot.press("h")
        # Highlighted #5 first; mark it and #2 (three rows down), then compare those two.
        await pilot.press("space", "down", "down", "down", "space", "enter")
        assert app.screen.marked == [5, 2]
        text = compare_text(app)
        assert "#2 -> #5: graphs 2 -> 1, breaks 1 -> 0" in text
        assert "settings #2: fullgraph=off  dynamic=true" in text
        assert "settings #5: fullgraph=off  dynamic=auto" in text
        assert "[x]" in str(app.screen.query_one(OptionList).get_option("2").prompt)
        await pilot.press("space")  # unmark #2: enter pairs #5 with the highlighted #2 anyway
        assert app.screen.marked == [5]
        await pilot.press("escape")
        assert app.screen is app.main
