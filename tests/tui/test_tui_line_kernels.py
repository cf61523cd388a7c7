"""The kernels in the app, by key (issue 21): `k` makes the runs profile Inductor's kernels,
Source marks each line a kernel holds K, and `l` puts a line cursor on a line with its kernels
below it. Pilot on the fake engine and canned reports (fixtures/fused_pointwise.json, a real
`check --json --kernels` run on torch 2.13), snapshots at 80x24 and 160x50, and the app's
--kernels and --code flags."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest
from tui_fakes import (
    FIXTURES,
    FakeEngine,
    bar_text,
    canned,
    load_fixture,
    pane_text,
    plain,
    pressing,
    settle,
    snapshot_app,
)

from playground.engine.passes import Passes
from playground.engine.report import Report
from tests.tui.test_tui_explain_snapshots import screen_text
from tui.panes.source import render_source

SNIPPET = "fused_pointwise.py"
SOURCE = (FIXTURES / SNIPPET).read_text()
SIZES = [(80, 24), (160, 50)]


def without_profile(text: str, settings: Any) -> dict[str, Any]:
    report = copy.deepcopy(load_fixture("fused_pointwise"))
    report.pop("kernels_profile")
    return report


def marked(text: str) -> set[int]:
    """The snippet lines drawn with a K in the gutter."""
    return {int(m.group(1)) for m in re.finditer(r"^\s*(\d+) K ", text, re.MULTILINE)}


async def test_k_makes_the_runs_profile_the_kernels_and_says_so_in_the_settings_bar():
    app = snapshot_app(canned("fused_pointwise"), SNIPPET)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert "kernels" not in app.engine.options[-1]  # off by default: it costs a profiler pass
        assert "kernels" not in bar_text(app, "settings")
        await pilot.press("k")
        await settle(pilot)
        assert len(app.engine.runs) == 2  # reran at once
        assert app.engine.options[-1] == {"kernels": True}
        assert bar_text(app, "settings").strip().endswith("k kernels on")
        await pilot.press("r")
        await settle(pilot)
        assert app.engine.options[-1] == {"kernels": True}  # every run from then on
        await pilot.press("k")
        await settle(pilot)
        assert len(app.engine.runs) == 4 and "kernels" not in app.engine.options[-1]
        assert "kernels" not in bar_text(app, "settings")


async def test_source_marks_the_lines_each_kernel_holds():
    app = snapshot_app(canned("fused_pointwise"), SNIPPET)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        text = pane_text(app, "source")
    # sin, mul, relu+cos+add fused (31-33), the mm (34), the tanh (35); not the def, not inputs().
    assert marked(text) == {31, 32, 33, 34, 35}
    assert "KERNEL cpp_fused_add_cos_mul_relu_sin_0 26 us (7%), lines 31-33" in text
    assert "LIBRARY KERNEL mm 184 us (51%)" in text and "KERNEL cpp_fused_tanh_1 53 us (15%)" in text


async def test_l_shows_the_kernels_of_the_line_under_the_cursor_and_the_arrows_move_it():
    app = snapshot_app(canned("fused_pointwise"), SNIPPET)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("7", "l")  # from another pane: l brings Source into view
        await settle(pilot)
        assert app.main.deck.current == "source" and app.main.line_cursor == 31  # the first kernel's line
        text = pane_text(app, "source")
        assert "▶ line 31: 1 kernel, 26 us of the 361 us call (7%)" in text
        assert "cpp_fused_add_cos_mul_relu_sin_0  26 us (7%)" in text
        assert "holds aten.add, aten.cos, aten.mul, aten.relu, aten.sin" in text
        assert "fused with lines 32, 33: one kernel for their ops" in text
        await pilot.press("down", "down")
        await settle(pilot)
        assert app.main.line_cursor == 33
        assert "fused with lines 31, 32: one kernel for their ops" in pane_text(app, "source")
        screen = screen_text(app)  # scrolled so that the line and its rows are on screen
        assert "33 K     c = b.relu() + x.cos()" in screen and "fused with lines 31, 32" in screen
        await pilot.press("down")
        await settle(pilot)
        screen = screen_text(app)
        assert "▶ line 34: 1 library kernel, 184 us of the 361 us call (51%)" in screen
        assert "Inductor wrote no kernel for it" in screen and "mm (library kernel)  184 us (51%)" in screen
        await pilot.press("down", "down")  # 36: a blank line
        await settle(pilot)
        assert "▶ line 36 is blank: no code, no kernel" in screen_text(app)
        await pilot.press(*["down"] * 40)  # past the end: it stays on the last line
        await settle(pilot)
        last = SOURCE.count("\n")
        assert app.main.line_cursor == last
        assert f"▶ line {last}: no kernel of call 1 came from this line; it runs" in screen_text(app)
        await pilot.press("l")
        await settle(pilot)
        assert app.main.line_cursor is None and "▶" not in pane_text(app, "source")
        await pilot.press("l")  # back where it was
        await settle(pilot)
        assert app.main.line_cursor == last


async def test_without_a_profile_the_line_says_to_press_k():
    app = snapshot_app(without_profile, SNIPPET)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert marked(pane_text(app, "source")) == set()
        await pilot.press("l")
        await settle(pilot)
        assert app.main.line_cursor == 1  # no kernel, no break: the first line
        screen = screen_text(app)
        assert "▶ line 1: this run has no kernels profile: press k to profile them" in screen
        assert "it costs each run a profiler pass and a compile with provenance" in screen
        await pilot.press("k")
        await settle(pilot)
        assert app.engine.options[-1] == {"kernels": True}
        text = pane_text(app, "source")
        assert "press k" not in text  # asked already: no advice to press it again
        assert "this run has no kernels profile (it ended before the profile)" in text


async def test_the_arrows_scroll_as_before_unless_the_cursor_is_in_view():
    app = snapshot_app(canned("fused_pointwise"), SNIPPET)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("1")
        deck = app.main.deck
        deck.scroll_pane_to("source", 0)
        await pilot.press("down", "down")
        await settle(pilot)
        assert app.main.line_cursor is None and deck.scroll_y == 2
        await pilot.press("l", "7")  # the cursor is shown, but the Timing pane is in view
        await settle(pilot)
        before = app.main.line_cursor
        await pilot.press("down")
        await settle(pilot)
        assert app.main.line_cursor == before and deck.scroll_y == 1


async def test_on_a_wide_screen_the_arrows_move_the_cursor_only_while_source_has_the_focus():
    app = snapshot_app(canned("fused_pointwise"), SNIPPET)
    async with app.run_test(size=(160, 50)) as pilot:
        await settle(pilot)
        await pilot.press("7", "l")  # Source stands beside the tabs: l focuses it
        await settle(pilot)
        assert app.main.line_cursor == 31 and app.main.deck.current == "timings"
        await pilot.press("down")
        await settle(pilot)
        assert app.main.line_cursor == 32
        await pilot.press("7", "down")  # the Timing pane has the focus: the arrow is its own
        await settle(pilot)
        assert app.main.line_cursor == 32 and app.main.focused is app.main.deck
        await pilot.press("1", "down")
        await settle(pilot)
        assert app.main.line_cursor == 33
        assert "▶ line 33: 1 kernel" in screen_text(app)


def test_an_eager_run_has_no_kernels_and_the_cursor_says_only_inductor_writes_them():
    raw = load_fixture("fused_pointwise")
    raw["settings"]["backend"] = "eager"
    raw["kernels_profile"] = {"note": "not profiled: only Inductor writes kernels (backend eager)"}
    raw.pop("compile_anatomy")
    text = plain(render_source(SOURCE, Report.from_dict(raw), cursor=33, ask="press k"))
    assert marked(text) == set()
    assert "▶ line 33: no kernels" in text
    assert "not profiled: only Inductor writes kernels (backend eager)" in text


def test_the_help_and_the_pane_help_name_the_keys_and_the_mark():
    from tui.keys.table import KEYS, PANE_HELP
    from tui.screens.help import help_renderable

    text = plain(help_renderable(), width=200)
    assert "Profile kernels: profile Inductor's kernels in every run from now on" in text
    assert "Kernels of a line: show a line cursor in Source" in text
    assert "K a line whose ops a profiled kernel holds" in PANE_HELP["source"]
    assert {key.key for key in KEYS if key.id in ("kernels", "line-kernels")} == {"k", "l"}


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_source_with_the_kernels_of_the_line_under_the_cursor(snap_compare, size):
    app = snapshot_app(canned("fused_pointwise"), SNIPPET)
    assert snap_compare(app, terminal_size=size, run_before=pressing("l", "down", "down"))


def test_the_app_command_takes_kernels_and_code(monkeypatch: pytest.MonkeyPatch):
    import tui.cli
    from playground.cli.main import main

    seen: dict[str, Any] = {}
    monkeypatch.setattr(tui.cli, "main", lambda path, overrides, **options: seen.update(options, path=path) or 0)
    assert main([str(FIXTURES / SNIPPET), "--kernels", "--code"]) == 0
    assert seen["passes"] == Passes(kernels=True, dynamo_code=True)
    assert main([str(FIXTURES / SNIPPET)]) == 0
    assert seen["passes"] == Passes()


async def test_started_with_kernels_and_code_the_first_run_asks_for_both():
    from tui.factory import make_app

    engine = FakeEngine(canned("fused_pointwise"))
    app = make_app(FIXTURES / SNIPPET, engine=engine, watch=False, passes=Passes(kernels=True, dynamo_code=True))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert engine.options == [{"dynamo_code": True, "kernels": True}]
        assert "k kernels on" in bar_text(app, "settings")
