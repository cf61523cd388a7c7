"""Panes are built once per report and drawn from cache: a pane key (1-9) or a progress update
must not rebuild a pane whose inputs did not change, and a new report must rebuild it."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from textual import visual
from textual.widgets import Footer
from textual.widgets._footer import FooterKey
from tui_fakes import FakeEngine, canned, pane_text, plain, settle

from playground.engine.report import Report
from playground.engine.settings import Settings
from tui.factory import make_app
from tui.keys.table import PANES
from tui.run.view import RunState
from tui.screens import main
from tui.widgets.deck import PaneDeck
from tui.widgets.display import PaneView, same_key


def current(name: str):
    """A canned report, as if made from the file now on disk (so not STALE)."""

    def respond(text: str, settings: Settings) -> dict[str, Any]:
        report = canned(name)(text, settings)
        report["content_sha256"] = hashlib.sha256(text.encode()).hexdigest()
        return report

    return respond


#: The pane keys 1-9 (a tenth pane, Dynamo's code, reruns to fetch it: not a plain switch).
KEYS = "123456789"[: len(PANES)]


def renders(app) -> dict[str, int]:
    """How often each pane's body was built and handed to its widget (the deck's, by pane)."""
    side = {view.id: view.renders for view in app.main.query(PaneView)}
    return side | {f"pane-{pane}": count for pane, count in app.main.deck.renders.items()}


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Calls of the Guards pane's pure function, counted."""
    calls = {"guards": 0}
    render = main._ANALYSIS["guards"]

    def counting(report: Report):
        calls["guards"] += 1
        return render(report)

    monkeypatch.setitem(main._ANALYSIS, "guards", counting)
    return calls


async def test_switching_panes_rebuilds_nothing(snippet: Path, counted: dict[str, int]):
    app = make_app(snippet, engine=FakeEngine(current("recompile_limit")), watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        before, guards = renders(app), counted["guards"]
        assert guards >= 1
        for _ in range(2):
            for key in KEYS:
                await pilot.press(key)
                await pilot.pause()
        assert renders(app) == before
        assert counted["guards"] == guards
        # The cached body is still the one shown, in full.
        assert "0/0" in pane_text(app, "guards")


async def test_progress_updates_rebuild_no_pane(snippet: Path, counted: dict[str, int]):
    app = make_app(snippet, engine=FakeEngine(current("recompile_limit")), watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        before, guards = renders(app), counted["guards"]
        view = app.main.view
        assert not view.stale
        for call in (1, 2, 3):
            app.main.view = replace(view, run=RunState("running", step="compiling", call=call, calls=3))
            await pilot.pause()
        assert renders(app) == before
        assert counted["guards"] == guards
        assert "compiling call 3/3" in plain(app.main.query_one("#summary").content, width=200)


async def test_a_new_report_rebuilds_each_pane_once(snippet: Path, counted: dict[str, int]):
    app = make_app(snippet, engine=FakeEngine(current("recompile_limit")), watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        old = app.main.view.report
        before, guards = renders(app), counted["guards"]
        await pilot.press("r")
        await settle(pilot)
        # The same canned content, but a new run's report: identity decides, so it is shown afresh.
        assert app.main.view.report is not old
        assert counted["guards"] > guards
        after = renders(app)
        assert all(after[pane] > before[pane] for pane in ("pane-guards", "pane-graphs", "pane-logs"))
        settled, guards = renders(app), counted["guards"]
        for key in KEYS:
            await pilot.press(key)
            await pilot.pause()
        assert renders(app) == settled and counted["guards"] == guards


async def test_a_stale_result_is_rebuilt_once_under_its_stale_line(snippet: Path):
    engine = FakeEngine(current("recompile_limit"))
    app = make_app(snippet, engine=engine, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        good = app.main.view
        stale = replace(good, stale=True, run=RunState("running", step="compiling", call=1))
        app.main.view = stale
        await pilot.pause()
        assert "STALE: from before the latest change" in pane_text(app, "guards")
        once = renders(app)
        app.main.view = replace(stale, run=RunState("running", step="compiling", call=2))
        await pilot.pause()
        assert renders(app) == once
        app.main.view = good
        await pilot.pause()
        assert "STALE" not in pane_text(app, "guards")


async def test_switching_back_draws_from_cache(snippet: Path, monkeypatch: pytest.MonkeyPatch):
    drawn: list[tuple[str, int]] = []
    original = visual.RichVisual.render_strips

    def counting(self, width, height, style, options):
        # The deck's own lines (its scrollbar, a child of it, is drawn apart).
        drawn.append((self._widget.id if isinstance(self._widget, PaneDeck) else "other", width))
        return original(self, width, height, style, options)

    monkeypatch.setattr(visual.RichVisual, "render_strips", counting)
    app = make_app(snippet, engine=FakeEngine(current("recompile_limit")), watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for key in KEYS:  # each pane drawn once at its width
            await pilot.press(key)
            await pilot.pause()
        drawn.clear()
        for key in KEYS * 2:
            await pilot.press(key)
            await pilot.pause()
        # The deck draws each pane's lines once per width and style.
        assert [(pane, width) for pane, width in drawn if pane == "deck"] == []


async def test_stepping_the_graph_rebuilds_only_the_graphs_pane(snippet: Path):
    app = make_app(snippet, engine=FakeEngine(current("break")), watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert len(app.main.view.report.graphs) == 2
        before = renders(app)
        await pilot.press("]")
        await pilot.pause()
        after = renders(app)
        assert {pane for pane in after if after[pane] != before[pane]} == {"pane-graphs"}


async def test_the_footer_is_not_rebuilt_by_a_pane_switch(snippet: Path):
    app = make_app(snippet, engine=FakeEngine(current("recompile_limit")), watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        keys = list(app.main.query_one(Footer).query(FooterKey))
        assert keys
        for key in KEYS:
            await pilot.press(key)
            await pilot.pause()
        assert list(app.main.query_one(Footer).query(FooterKey)) == keys


def test_keys_match_frozen_values_by_identity_and_text_by_value():
    report = Report.from_dict(canned("recompile_limit")("", None))
    twin = Report.from_dict(canned("recompile_limit")("", None))
    assert same_key(("guards", report, "words"), ("guards", report, "words"))
    assert not same_key(("guards", report), ("guards", twin))
    assert same_key(("source", "x = 1\n", True), ("source", "x = 1\n", True))
    assert not same_key(("source", "x = 1\n"), ("source", "x = 2\n"))
    assert not same_key(("a",), ("a", None))
