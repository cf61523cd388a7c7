"""Every pane fits 80, 100 and 160 columns with no word broken across lines, on a real model's
report (fixtures/llama_inductor.json: `check --json --backend inductor --kernels` on
snippets/models/llama.py, torch 2.13 on CPU: 150-letter kernel names, parameter paths, six
compile phases) and on every other canned report; and each pane at 80x24 on that report, pinned
as a snapshot (canned, never a live torch run).

A word is broken when a line ends inside it. Precisely: the pane is rendered once at the width
the app gives it and once unwrapped (2,000 columns: every line whole); each word of the narrow
rendering (split at spaces, and at box-drawing and bar characters, which are no words) must be a
word of the unwrapped one. A word cut in two leaves a piece that is no word ("compi", "le");
a word cut short ("weight.g…") is no word either. The one exception is a word that cannot fit:
longer than its line can hold (the width, less the line's indentation and a gutter of
`GUTTER` columns), which folds: Inductor's kernel names, a long C++ expression.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from rich.console import Console, Group, RenderableType
from rich.table import Table
from tui_fakes import FIXTURES, canned, pressing, settle, snapshot_app

from playground.engine.report import Report
from playground.engine.wording import phases
from tui import panes
from tui.keys.table import PANES
from tui.widgets.display import PaneBody

ROOT = Path(__file__).resolve().parents[2]
#: The real model's report, and the snippet it ran (a copy of snippets/models/llama.py).
REAL = "llama_inductor"
#: Each canned report and the snippet it is of (the Source pane draws the snippet).
SNIPPETS = {
    REAL: FIXTURES / "llama.py",
    "llama_guards": FIXTURES / "llama.py",
    "break": FIXTURES / "branch.py",
    "break_in_loop": ROOT / "snippets/break_in_loop.py",
    "default": ROOT / "snippets/default.py",
    "dynamo_code": FIXTURES / "print_break.py",
    "equivalence_fail": FIXTURES / "bf16_sum.py",
    "fullgraph_refusal": FIXTURES / "branch.py",
    "fused_pointwise": ROOT / "snippets/fused_pointwise.py",
    "fused_pointwise_waterfall": FIXTURES / "fused_pointwise.py",
    "recompile_limit": FIXTURES / "lr_schedule.py",
    "why_recompile_lr": ROOT / "snippets/lr_float_static.py",
    "train_loop_program": FIXTURES / "train_loop.py",
    "one_rank_recompiles": ROOT / "snippets/ranks/one_rank_recompiles.py",
}
#: The width a pane is drawn at, by terminal columns: the tab deck at 80 and 100 columns, and
#: at 160 both halves of the wide layout (the side's Source and Breaks, and the tabs), as
#: `test_the_panes_are_drawn_at_these_widths` measures in the app.
PANE_WIDTH = {80: 77, 100: 97, 160: 77}
#: Columns a pane may take from a line before its words: a gutter, a bar, a table's rules.
GUTTER = 8
UNWRAPPED = 2000
#: What separates words: spaces, box-drawing characters and block elements (the bars).
_SEPARATORS = re.compile(r"[\s\u2500-\u259f]+")


def rendered_lines(renderable: RenderableType, width: int) -> list[str]:
    console = Console(width=width, color_system=None, record=True, file=io.StringIO(), legacy_windows=False)
    console.print(renderable)
    return console.export_text().splitlines()


def broken_words(render, width: int) -> set[str]:
    """The pieces of words that `render()` breaks at `width`: words of its rendering there
    that are no word of its unwrapped rendering (see the module's docstring)."""
    whole: set[str] = set()
    too_long: list[str] = []
    for line in rendered_lines(render(), UNWRAPPED):
        indent = len(line) - len(line.lstrip())
        for word in filter(None, _SEPARATORS.split(line)):
            whole.add(word)
            if len(word) > width - indent - GUTTER:
                too_long.append(word)
    return {
        word
        for line in rendered_lines(render(), width)
        for word in filter(None, _SEPARATORS.split(line))
        if word not in whole and not any(word in long for long in too_long)
    }


def pane_renders(name: str) -> dict[str, object]:
    """Each pane of the app as a function of the canned report `name` (the Source pane with
    its snippet)."""
    report = Report.from_dict(json.loads((FIXTURES / f"{name}.json").read_text()))
    source = SNIPPETS[name].read_text()
    renders: dict[str, object] = {
        "source": lambda: panes.render_source(source, report, report.error),
        "graphs": lambda: panes.render_graphs(report),
    }
    for pane in ("breaks", "guards", "recompiles", "equivalence", "timings", "dynamo_code", "logs", "output"):
        renders[pane] = lambda pane=pane: getattr(panes, f"render_{pane}")(report)
    return renders


def test_every_canned_report_is_checked():
    assert {path.stem for path in FIXTURES.glob("*.json")} == set(SNIPPETS)


@pytest.mark.parametrize("width", sorted(set(PANE_WIDTH.values())))
@pytest.mark.parametrize("name", sorted(SNIPPETS))
def test_no_pane_breaks_a_word(name: str, width: int):
    """At each width a pane is drawn at (160 columns draws them at 80's width: once covers both)."""
    terminals = [columns for columns, drawn in PANE_WIDTH.items() if drawn == width]
    broken = {
        pane: sorted(found)[:6] for pane, render in pane_renders(name).items() if (found := broken_words(render, width))
    }
    assert not broken, f"words broken at {width} columns (terminals of {terminals} columns): {broken}"


def test_the_check_finds_the_words_a_narrow_table_column_breaks():
    """The check itself can fail: the compile-phase table as a plain Rich table with a column
    per phase, as the Timing pane once drew it, folds its words at 80 columns."""
    report = Report.from_dict(json.loads((FIXTURES / f"{REAL}.json").read_text()))

    def old_phase_table() -> RenderableType:
        phase_table = phases.phase_table(report)
        assert phase_table is not None
        table = Table(show_edge=False, expand=False, title=phases.TITLE, title_justify="left")
        for i, name in enumerate(phase_table.header):
            table.add_column(name, justify="left" if i == 0 else "right", overflow="fold")
        for row in phase_table.all_rows:
            table.add_row(*row)
        return Group(table)

    broken = broken_words(old_phase_table, PANE_WIDTH[80])
    assert {"compi", "Dynam"} <= broken
    assert not broken_words(old_phase_table, UNWRAPPED // 2)


async def test_the_panes_are_drawn_at_these_widths():
    for columns, width in PANE_WIDTH.items():
        app = snapshot_app(canned("default"), "branch.py")
        async with app.run_test(size=(columns, 24 if columns < 160 else 50)) as pilot:
            await settle(pilot)
            # The Source pane's grid takes the whole width it is given.
            assert max(strip.cell_length for strip in app.main.deck.rendered("source")) == width
            if columns >= 160:
                bodies = {body.parent.id: body.size.width for body in app.main.query(PaneBody)}
                assert bodies["side-source"] == bodies["side-breaks"] == width


# --- each pane at 80x24 on the real model's report -------------------------------------------

#: Each pane's key (the tenth on 0).
PANE_KEYS = {pane: str(n % 10) for n, (pane, _) in enumerate(PANES, start=1)}


@pytest.mark.parametrize("pane", list(PANE_KEYS))
def test_pane_on_a_real_model_80x24(snap_compare, pane: str):
    app = snapshot_app(canned(REAL), "llama.py")
    assert snap_compare(app, terminal_size=(80, 24), run_before=pressing(PANE_KEYS[pane]))
