"""The Breaks and Timing panes lay out where the time goes from the wording layer's lines (the
same lines as `check` and the Markdown export: tests/engine/test_wording_compiled.py)."""

from __future__ import annotations

from dataclasses import replace

from tui_fakes import plain

from tests.engine.test_wording_compiled import REPORT
from tui.panes.breaks import render_breaks
from tui.panes.timings import render_timings


def test_the_breaks_pane_leads_with_the_distinct_breaks():
    text = plain(render_breaks(replace(REPORT, graph_break_count=3)))
    assert text.startswith("3 graph breaks at 1 site")
    distinct = text.index("distinct breaks: 1 site, 3 records")
    assert distinct < text.index("fired 3 times")
    assert "x3  [GB0170]  fundamental: rewrite the code" in text


def test_the_timing_pane_shows_the_guard_cost_the_anatomy_and_the_kernels_below_the_timings():
    text = plain(render_timings(REPORT))
    assert text.index("speedup") < text.index("what each compile made") < text.index("kernels of call 1")
    assert "guards: 138 guards checked per call in 3.3 us" in text
    assert "mm [extern]  220 us (48%)  line 34" in text


def test_without_timings_the_anatomy_still_shows():
    text = plain(render_timings(replace(REPORT, timings=None, kernels_profile=None, guard_cost=None)))
    assert "timings:" in text and "graph 1 [0/0]: 10 FX nodes" in text


def test_the_timing_pane_shows_the_guard_what_if_below_the_timings_and_without_them():
    from tests.engine.test_wording_guard_what_if import MODULE

    text = " ".join(plain(render_timings(replace(REPORT, guard_what_if=MODULE))).split())  # lines wrap at 100
    assert text.index("speedup") < text.index("guard what-if: torch's unsafe guard switches on call 2")
    assert text.index("guard what-if") < text.index("what each compile made")
    assert "dropped 34 of 70 (torch's own nn modules' guards)" in text
    alone = " ".join(plain(render_timings(replace(REPORT, timings=None, guard_what_if=MODULE))).split())
    assert "timings: not measured" in alone and "no recompile: one cache entry, so no guard is checked" in alone
