"""The why-it-recompiled panes in the app, pinned at 80x24 and 160x50 on a canned report
(fixtures/why_recompile_lr.json: lr_float_static on torch 2.13, whose lines the fixture
copy of the snippet keeps): fixed clock, no watcher, no user config."""

from __future__ import annotations

import io

from rich.console import Console
from tui_fakes import canned, pressing, snapshot_app

SNIPPET = "lr_float_static.py"


def app_for_explained():
    return snapshot_app(canned("why_recompile_lr"), SNIPPET)


def screen_text(app) -> str:
    """What the terminal shows right now, as plain text: the first screen, not the whole pane."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), record=True, color_system=None)
    console.print(app.screen._compositor.render_update(full=True))
    return console.export_text()


def test_recompiles_pane_80x24(snap_compare):
    assert snap_compare(app_for_explained(), terminal_size=(80, 24), run_before=pressing("5"))


def test_recompiles_pane_160x50(snap_compare):
    assert snap_compare(app_for_explained(), terminal_size=(160, 50), run_before=pressing("5"))


def test_guards_pane_80x24(snap_compare):
    assert snap_compare(app_for_explained(), terminal_size=(80, 24), run_before=pressing("4"))


def test_guards_pane_160x50(snap_compare):
    assert snap_compare(app_for_explained(), terminal_size=(160, 50), run_before=pressing("4"))


async def test_guards_first_screen_at_80x24_is_the_users_guards():
    app = app_for_explained()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pressing("4")(pilot)
        screen = screen_text(app)
    assert "entry 0/0  fn" in screen
    assert "line 37: w: float32 size=[64]; lr == 0.1; grad: float32 size=[64]" in screen
    assert "internal guards (global state, grad mode, ids, module hooks, imports)" in screen
    # torch's own state stays folded: none of its guards' text reaches the first screen
    for internal in ("GLOBAL_STATE", "___check_global_state", "TORCH_FUNCTION_MODE_STACK", "top_saved_tensors_hooks"):
        assert internal not in screen


async def test_recompile_table_first_screen_at_80x24_names_the_argument_and_values():
    app = app_for_explained()
    async with app.run_test(size=(80, 24)) as pilot:
        await pressing("5")(pilot)
        screen = screen_text(app)
    assert "used up by changes of lr" in screen
    rows = [line.split() for line in screen.splitlines() if line.strip().startswith(("2 ", "3 "))]
    assert ["2", "0/1", "lr", "0.1", "0.09829629131445342", "37", "0/0"] in rows
    assert "…" not in screen.split("8 recompiles of fn")[1]  # values fold, never cut


def app_for_real_model():
    """A 2-layer Llama from transformers (the gallery's models/llama.py on torch 2.13): 599
    guards in one entry, most of them torch's and the library's bookkeeping."""
    return snapshot_app(canned("llama_guards"), "llama.py")


def test_guards_pane_on_a_real_model_80x24(snap_compare):
    assert snap_compare(app_for_real_model(), terminal_size=(80, 24), run_before=pressing("4"))


async def test_guards_first_screen_on_a_real_model_is_what_a_next_change_can_break():
    app = app_for_real_model()
    async with app.run_test(size=(80, 24)) as pilot:
        await pressing("4")(pilot)
        screen = screen_text(app)
    assert "no line: ids: int64 size=[2, 16]" in screen
    assert "modules: model.config.use_cache == False" in screen
    for bookkeeping in ("__import_", "_global_forward_hooks", "__dict__", "__closure__", "_modules["):
        assert bookkeeping not in screen
