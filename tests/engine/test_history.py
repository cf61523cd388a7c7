"""Before/after comparisons of runs (pure, canned reports)."""

from __future__ import annotations

from dataclasses import replace

from playground.engine.history import History, changes, describe, source_diff
from playground.engine.report import Report, Timings


def report(**kw) -> Report:
    base = {
        "torch_version": "2.13.0",
        "settings": {"backend": "eager"},
        "graph_count": 2,
        "graph_break_count": 1,
        "recompile_count": 0,
        "recompile_limit_hit": False,
        "error": None,
        "equivalence": {"ok": True, "outputs": [], "grads": []},
        "timings": {"compile_s": 0.1, "eager_ms": 1.0, "compiled_ms": 0.9, "speedup": 1.1, "device": "cpu"},
        "logs": {},
    }
    base.update(kw)
    return Report.from_dict(base)


def test_changes_after_removing_a_break():
    before = report()
    after = report(graph_count=1, graph_break_count=0, timings={"speedup": 1.9, "device": "cpu"})
    assert [str(c) for c in changes(before, after)] == ["graphs 2 -> 1", "breaks 1 -> 0", "speedup 1.10x -> 1.90x"]


def test_history_compares_with_the_previous_run_of_the_same_settings():
    h = History()
    a = h.add(report(), "x = 1\n")
    h.add(report(settings={"backend": "inductor"}), "x = 1\n")
    c = h.add(report(graph_break_count=0, equivalence={"ok": False, "outputs": [], "grads": []}), "x = 2\n")
    assert h.previous_same_settings(c) is a
    assert describe(a, c) == "#1 -> #3: breaks 1 -> 0, equivalence ok -> FAIL"
    assert source_diff(a.source, c.source) == ["@@ -1 +1 @@", "-x = 1", "+x = 2"]
    assert h.get(2).settings.backend == "inductor"


def test_speedup_noise_is_not_news_and_labels_fit_80_columns():
    before = report()
    after = report(timings={"speedup": 1.15, "device": "cpu"})
    assert changes(before, after) == []  # 1.10x -> 1.15x is within the noise
    h = History()
    entry = h.add(report(settings={"backend": "inductor", "fullgraph": True, "dynamic": False}), "")
    assert len(entry.label()) <= 78
    assert "inductor fullgraph dynamic=false: g2 b1 r0 eq ok" in entry.label()


def test_markdown_report_with_missing_timing_fields():
    from playground.engine.exports import markdown_report

    md = markdown_report(replace(report(), timings=Timings(compile_s=None, speedup=None, device="cpu")))
    assert "cold first call (compile included): n/a" in md
