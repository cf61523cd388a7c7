"""The why-it-recompiled panes on a canned report (fixtures/why_recompile_lr.json: lr_float_static, torch 2.13)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from rich.console import Console

from playground.engine.report import Report
from tui.panes import render_guards, render_recompiles, render_source

FIXTURE = Path(__file__).parent / "fixtures" / "why_recompile_lr.json"


def _text(renderable: object, width: int = 80) -> list[str]:
    console = Console(width=width, record=True, color_system=None)
    console.print(renderable)
    return console.export_text().splitlines()


def _report() -> Report:
    return Report.from_dict(json.loads(FIXTURE.read_text(encoding="utf-8")))


def test_guards_pane_first_screen_shows_the_users_guards():
    first_screen = "\n".join(_text(render_guards(_report()))[:20])
    assert "line 37: w: float32 size=[64]; lr == 0.1" in first_screen
    assert "GLOBAL_STATE" not in first_screen and "internal guard" in first_screen


def test_recompiles_pane_one_row_per_recompile_with_old_and_new():
    lines = _text(render_recompiles(_report()), width=160)
    # The table's rows: call, entry, arg, was, now, line, the entries that failed.
    rows = [line.split() for line in lines if re.match(r"^\s+\d+\s+(?:0/\d|limit)\s", line)]
    assert len(rows) == 8
    assert rows[0] == ["2", "0/1", "lr", "0.1", "0.09829629131445342", "37", "0/0"]
    assert rows[-1] == ["9", "limit", "lr", "0.03705904774487397", "0.025000000000000012", "37", "8", "entries"]
    assert any("call 9 ran eagerly" in line for line in lines)


def test_source_marks_guard_line_with_g():
    source = (Path(__file__).parents[2] / "snippets" / "lr_float_static.py").read_text(encoding="utf-8")
    lines = _text(render_source(source, _report()), width=100)
    assert any(line.strip().startswith("37 G") for line in lines)
    assert any("GUARDS on w, lr, grad" in line for line in lines)
