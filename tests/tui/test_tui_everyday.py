"""Everyday use at 80 columns: torch's own switches stay visible in the settings bar,
all ten pane tabs fit, the recompile-limit banner leaves the table in view, hidden panes are
rendered ahead of their first switch, tabs answer clicks and panes keep their scroll offsets.
Canned reports and the fake engine only."""

from __future__ import annotations

import io

from rich.console import Console
from tui_fakes import FIXTURES, FakeEngine, canned, load_fixture, plain, pressing, rule_report, settle, snapshot_app

from playground.engine.report import Report
from playground.engine.settings import Settings
from tui.factory import make_app
from tui.keys.table import PANES
from tui.panes.recompiles import limit_banner, render_recompiles
from tui.screens.main import WIDE, tab_labels
from tui.widgets.summary_bar import settings_text

#: The gallery's lesson on torch's own switches (its SETTINGS set capture_scalar_outputs).
CONFIG_SNIPPET = "config_scalar_outputs.py"
SCALAR = Settings(backend="eager", config=(("dynamo.capture_scalar_outputs", True),))


def screen_text(app) -> str:
    """What the terminal shows right now, as plain text."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), record=True, color_system=None)
    console.print(app.screen._compositor.render_update(full=True))
    return console.export_text()


# The settings bar.
def test_the_settings_bar_keeps_its_full_words_when_they_fit():
    assert settings_text(Settings(backend="eager"), width=78).plain == (
        "f fullgraph off d dynamic auto b backend eager m mode default c device cpu"
    )
    full = settings_text(SCALAR)
    assert full.plain.endswith("c device cpu  dynamo.capture_scalar_outputs=True")
    assert settings_text(SCALAR, width=full.cell_len).plain == full.plain


def test_a_set_switch_is_visible_at_80_columns():
    text = settings_text(SCALAR, width=78)  # 80 columns less the bar's padding
    assert text.cell_len <= 78
    assert text.plain == "f full off d dyn auto b eager m default c cpu  capture_scalar_outputs=True"


def test_many_switches_are_counted_and_a_cut_always_ends_in_an_ellipsis():
    many = Settings(
        backend="eager",
        config=(("dynamo.capture_scalar_outputs", True), ("dynamo.capture_dynamic_output_shape_ops", True)),
        stance="eager_on_recompile",
    )
    text = settings_text(many, width=78)
    assert text.cell_len <= 78
    assert "c cpu  +3 switches: capture_scalar" in text.plain
    assert text.plain.endswith("…")
    worker = settings_text(Settings(device="cuda"), Settings(device="cpu"), width=78)
    assert worker.plain == "f full off d dyn auto b inductor m default c cuda  (worker used: device=cpu)"


def test_a_long_mode_alone_takes_the_short_names_and_keeps_the_device_at_80_columns():
    long_mode = Settings(backend="inductor", mode="max-autotune-no-cudagraphs", device="cuda")
    text = settings_text(long_mode, width=78)
    assert text.cell_len <= 78 and not text.plain.endswith("…")
    assert text.plain.endswith("c cuda")
    assert settings_text(long_mode).plain.endswith("c device cuda")  # unbounded: the long names


def test_a_setting_the_workers_run_lacks_is_named_and_never_left_empty():
    asked, used = Settings(target="fn"), Settings()
    assert settings_text(asked, used, width=100).plain.endswith("(worker used: without target=fn)")
    assert "(worker used: )" not in settings_text(asked, used, width=200).plain


async def test_the_config_switch_is_on_screen_at_80x24():
    app = snapshot_app(rule_report, CONFIG_SNIPPET)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        assert "capture_scalar_outputs=True" in screen_text(app).splitlines()[1]


def test_config_switch_80x24(snap_compare):
    app = snapshot_app(rule_report, CONFIG_SNIPPET)
    assert snap_compare(app, terminal_size=(80, 24), run_before=pressing())


# The pane tabs.
def test_all_ten_tabs_fit_80_columns_and_keep_their_full_titles_at_160():
    narrow = tab_labels(80)
    assert list(narrow) == [pane for pane, _ in PANES]
    assert sum(len(label) + 1 for label in narrow.values()) <= 80
    assert narrow["dynamo_code"] == "0 Code" and narrow["source"] == "1 Src"
    wide = tab_labels(160)
    assert "source" not in wide and "breaks" not in wide  # in the left column
    assert wide == {pane: f"{n % 10} {title}" for n, (pane, title) in enumerate(PANES, 1) if pane in wide}
    assert sum(len(label) + 1 for label in tab_labels(WIDE).values()) <= WIDE // 2 - 1


async def test_every_tab_is_on_screen_at_80x24():
    app = snapshot_app(canned("break"), "branch.py")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("0")
        await settle(pilot)
        tabs = screen_text(app).splitlines()[2]
        assert tabs.split() == "1 Src 2 Breaks 3 Graphs 4 Guards 5 Recomp 6 Equiv 7 Time 8 Logs 9 Out 0 Code".split()


# The recompile-limit banner.
def test_the_recompile_limit_banner_takes_at_most_four_rows_at_80_columns():
    for name in ("recompile_limit", "why_recompile_lr"):
        report = Report.from_dict(load_fixture(name))
        banner = plain(limit_banner(report), width=77)  # the pane's width at 80 columns
        assert "RECOMPILE LIMIT HIT" in banner
        assert len(banner.rstrip("\n").splitlines()) == 2, banner  # the headline, one function


def test_the_limit_hints_follow_the_recompile_table():
    text = plain(render_recompiles(Report.from_dict(load_fixture("why_recompile_lr"))), width=77)
    assert "fn: fell back to eager after 8 recompiles, used up by changes of lr" in text
    table, hints = text.split("what to do about the recompile limit")
    assert "8 recompiles of fn" in table and "hint:" not in table
    assert "hint: lr is a Python constant to Dynamo" in hints
    assert "hint: raise torch._dynamo.config.recompile_limit" in hints


# Rendering ahead of a switch.
async def test_hidden_panes_are_rendered_before_their_first_switch():
    app = make_app(
        FIXTURES / "lr_float_static.py", engine=FakeEngine(canned("why_recompile_lr")), watch=False, clock=lambda: 0.0
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        deck = app.main.deck
        warm = deck.warm
        finished: list[bool] = []

        def watched(panes: list[str]) -> bool:
            took = warm(panes)
            finished.append(not took)  # the app warms one pane a call until none is left
            return took

        deck.warm = watched  # type: ignore[method-assign]
        await pilot.press("1")  # the focused deck gives the style to render at
        assert app.focused is deck
        assert deck.scrollable_content_region.width == 78  # 80 less the padding and the scrollbar's column
        hidden = [pane for pane, _ in PANES if pane != "source"]  # source is drawn: no need
        for _ in range(200):
            if finished and finished[-1]:
                break
            await pilot.pause(0.02)
        # Nothing is left to render: every hidden pane was drawn before its first switch.
        assert warm(hidden) is False


# The tab bar is one line of labels (tui/widgets/deck.py): a click on one shows its pane.
async def test_a_click_on_a_tab_label_shows_its_pane(snippet):
    app = make_app(snippet, engine=FakeEngine(), watch=False, clock=lambda: 0.0)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        x = 0
        for pane, label in tab_labels(80).items():
            await pilot.click("#tabbar", offset=(x + len(label) // 2, 0))
            await pilot.pause()
            assert app.main.deck.current == pane, label
            assert app.focused is app.main.deck
            x += len(label) + 1
        # As its key does, the Code tab asked the worker for Dynamo's code.
        assert app.passes.dynamo_code
        # The gap between two labels chooses nothing.
        await pilot.click("#tabbar", offset=(len(tab_labels(80)["source"]), 0))
        await pilot.pause()
        assert app.main.deck.current == "dynamo_code"


async def test_each_pane_keeps_its_scroll_offset_through_switches_and_resizes():
    app = make_app(
        FIXTURES / "lr_float_static.py", engine=FakeEngine(canned("why_recompile_lr")), watch=False, clock=lambda: 0.0
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        deck = app.main.deck
        await pilot.press("4", "end")
        await pilot.pause()
        bottom = deck.scroll_y
        assert bottom > 0 and bottom == deck.max_scroll_y
        await pilot.press("1")
        await pilot.pause()
        assert deck.scroll_y == 0
        await pilot.press("4")
        await pilot.pause()
        assert deck.scroll_y == bottom
        await pilot.resize_terminal(70, 24)  # the guards wrap to more rows: still far down
        await pilot.pause()
        assert deck.scroll_y >= bottom and deck.current == "guards"
