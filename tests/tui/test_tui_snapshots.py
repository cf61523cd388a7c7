"""The main screen pinned at 80x24 and 160x50, fed canned reports (never a live torch run):
fixed clock, no watcher, no user config, nothing that blinks."""

from __future__ import annotations

import copy

from tui_fakes import canned, load_fixture, pressing, rule_report, snapshot_app


def app_for(report: str, snippet: str, respond=None):
    return snapshot_app(respond or canned(report), snippet)


def refuse_under_fullgraph(text, settings):
    name = "fullgraph_refusal" if settings.fullgraph else "break"
    return copy.deepcopy(load_fixture(name))


def test_break_80x24(snap_compare):
    assert snap_compare(app_for("break", "branch.py"), terminal_size=(80, 24), run_before=pressing())


def test_break_160x50(snap_compare):
    assert snap_compare(app_for("break", "branch.py"), terminal_size=(160, 50), run_before=pressing())


def test_breaks_pane_80x24(snap_compare):
    app = app_for("break", "branch.py")
    assert snap_compare(app, terminal_size=(80, 24), run_before=pressing("2"))


def test_recompile_limit_80x24(snap_compare):
    app = app_for("recompile_limit", "lr_schedule.py")
    assert snap_compare(app, terminal_size=(80, 24), run_before=pressing("5"))


def test_fullgraph_refusal_80x24(snap_compare):
    app = app_for("", "branch.py", respond=refuse_under_fullgraph)
    assert snap_compare(app, terminal_size=(80, 24), run_before=pressing("f"))


def test_equivalence_fail_160x50(snap_compare):
    app = app_for("equivalence_fail", "bf16_sum.py")
    assert snap_compare(app, terminal_size=(160, 50), run_before=pressing("6"))


def breaks_and_shapes(text, settings):
    # The fake's rules: the fixture's break, plus three input shapes so dynamic matters.
    return rule_report(text + "\n# SHAPES", settings)


def test_matrix_80x24(snap_compare):
    app = app_for("", "branch.py", respond=breaks_and_shapes)
    assert snap_compare(app, terminal_size=(80, 24), run_before=pressing("x"))
