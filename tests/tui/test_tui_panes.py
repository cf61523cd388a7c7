"""Each pane is a pure function of a Report: tested on canned reports, without an app."""

from __future__ import annotations

from tui_fakes import FIXTURES, load_fixture, plain

from playground.engine.report import Report
from tui.panes import (
    render_breaks,
    render_equivalence,
    render_graphs,
    render_guards,
    render_logs,
    render_output,
    render_recompiles,
    render_source,
    render_timings,
)
from tui.panes.guards import failing_guards


def report(name: str) -> Report:
    return Report.from_dict(load_fixture(name))


def source(name: str) -> str:
    return (FIXTURES / name).read_text()


def test_source_marks_the_break_line_with_its_reason():
    text = plain(render_source(source("branch.py"), report("break")))
    lines = text.splitlines()
    marked = next(line for line in lines if "if y.sum() > 0:" in line)
    assert marked.split()[:2] == ["10", "B"]
    below = lines[lines.index(marked) + 1]
    assert "BREAK: Data-dependent branching" in below
    assert "1 graph break at 1 site (line 10)" in text


def test_source_marks_the_error_line_and_heads_with_the_cause():
    refusal = report("fullgraph_refusal")
    text = plain(render_source(source("branch.py"), report("break"), refusal.error, stale=True))
    assert text.startswith("ERROR (compile error) at line 10: Unsupported: Data-dependent branching")
    marked = next(line for line in text.splitlines() if "if y.sum() > 0:" in line)
    assert marked.split()[:2] == ["10", "E"]
    assert "ERROR (compile) Unsupported" in text
    assert "STALE" in text


def test_source_groups_recompiles_per_function():
    text = plain(render_source(source("lr_schedule.py"), report("recompile_limit")))
    assert text.count("RECOMPILED ×8 (fn)") == 1
    assert "last: L['lr'] == 0.8" in text


def test_breaks_lists_site_reason_hints_and_line():
    text = plain(render_breaks(report("break")))
    assert "1 graph break at 1 site  (graphs 2)" in text
    assert "line 10  Data-dependent branching  fired 1 time  [GB0170]" in text
    assert "hint: Use `torch.cond` to express dynamic control flow." in text


def test_breaks_says_none_in_words():
    assert "no graph breaks  (graphs 8)" in plain(render_breaks(report("recompile_limit")))


def test_recompile_limit_banner_is_loud_and_in_words():
    text = plain(render_recompiles(report("recompile_limit")))
    assert "RECOMPILE LIMIT HIT" in text
    assert "fn: fell back to eager after 8 recompiles" in text
    assert "entry 0/0 failed: L['lr'] == 0.1" in text
    assert "no new entry" in text  # the eighth recompile hit the limit instead


def test_guards_mark_the_failing_guard_by_compile_id():
    limit = report("recompile_limit")
    failing = failing_guards(limit)
    assert sorted(failing) == [f"0/{k}" for k in range(8)]
    assert failing["0/3"] == [(2, "L['lr'] == 0.4")]
    text = plain(render_guards(limit))
    assert "▶ FAILED EQUALS_MATCH: L['lr'] == 0.4" in text
    assert text.count("FAILED later") == 8


def test_equivalence_separates_values_and_gradients_with_words():
    text = plain(render_equivalence(report("equivalence_fail")))
    assert text.startswith("equivalence FAIL")
    values, grads = text.index("values (outputs)"), text.index("gradients")
    assert values < grads
    assert "0.0312" in text[values:grads] and "FAIL" in text[values:grads]
    assert "0.00195" in text[grads:] and "w " in text[grads:]
    assert "gradients: float32, tolerance atol 1.00e-05 rtol 1.00e-05" in text  # what it was judged against


def test_equivalence_pending_at_the_diagnostics_stage():
    data = load_fixture("break") | {"stage": "diagnostics", "equivalence": None, "timings": None}
    assert "pending" in plain(render_equivalence(Report.from_dict(data)))
    assert "pending" in plain(render_timings(Report.from_dict(data)))


def test_timings_name_the_device_cache_and_keep_speedup_with_counts():
    text = plain(render_timings(report("equivalence_fail")))
    assert "device cpu" in text
    assert "cold compile 2.84 s" in text and "caches missed" in text
    assert "± 0.0043 ms" in text
    speedup_line = next(line for line in text.splitlines() if "speedup" in line)
    assert speedup_line.strip() == "speedup 1.85x  with graphs 1  breaks 0"


def test_logs_are_raw_text_under_their_torch_logs_names():
    limit = report("recompile_limit")
    text = plain(render_logs(limit), width=400)
    assert "TORCH_LOGS=recompiles" in text
    assert "triggered by the following guard failure(s):" in text
    assert "torch._dynamo hit config.recompile_limit (8)" in text
    assert "TORCH_LOGS=graph_breaks" in text and "(empty)" in text


def test_output_shows_print_and_error_detail():
    assert "x dtype torch.float32" in plain(render_output(report("equivalence_fail")))
    text = plain(render_output(report("fullgraph_refusal")))
    assert "compile error (line 10): Unsupported" in text
    assert "torch._dynamo.exc.Unsupported" in text


def test_graphs_show_each_graph_with_its_entry():
    text = plain(render_graphs(report("break")))
    assert "graph 1  entry 0/0  3 ops" in text and "graph 2  entry 1/0  1 op" in text
    assert "gt = sum_1 > 0" in text


def test_summary_line_tokens():
    assert report("break").summary_line() == ("graphs 2  breaks 1  recompiles 0  equiv ok  speedup 0.22x")
    assert "equiv FAIL" in report("equivalence_fail").summary_line()


def test_graphs_show_one_graph_at_a_time_with_its_generated_code():
    raw = load_fixture("break")
    raw["settings"]["backend"] = "inductor"
    raw["graphs"][1]["output_code"] = "def call(args):\n    return (buf0,)\n"
    inductor = Report.from_dict(raw)
    first = plain(render_graphs(inductor))
    assert "> graph 1  entry 0/0  3 ops  (shown)" in first
    assert "graph 2  entry 1/0  1 op  + generated code" in first
    assert "graph 1 (1 of 2): FX code" in first and "gt = sum_1 > 0" in first
    assert "no generated code was captured for this graph" in first
    second = plain(render_graphs(inductor, selected=1))
    assert "> graph 2  entry 1/0  1 op  + generated code  (shown)" in second
    assert "graph 2: code generated by inductor" in second and "return (buf0,)" in second
    assert "gt = sum_1 > 0" not in second
    assert "graph 2 (2 of 2)" in plain(render_graphs(inductor, selected=7))  # clamped


def test_many_graphs_are_picked_from_one_line_of_numbers():
    raw = load_fixture("break")
    raw["graphs"] = [dict(raw["graphs"][0], index=n, compile_id=f"0/{n - 1}") for n in range(1, 9)]
    text = plain(render_graphs(Report.from_dict(raw), selected=2))
    assert "graphs:  1   2  [3]  4 " in text and "shown: graph 3, entry 0/2, 3 ops" in text
    assert "entry 0/0" not in text and "graph 3 (3 of 8): FX code" in text


def test_the_output_pane_says_whose_output_it_is() -> None:
    from playground.engine.report.output import Output
    from tui.panes.output import render_output

    printed = Output(text="done\n", bytes=5)
    assert "what the program printed (5 bytes)" in plain(render_output(Report(kind="program", output=printed)))
    assert "what the snippet printed (5 bytes)" in plain(render_output(Report(output=printed)))
    assert "the program printed nothing" in plain(render_output(Report(kind="program")))
