"""Where the time goes, in words once: the distinct breaks, what each compile made, the guard
cost and the kernels profile reach the text report and the Markdown export from the same lines
(the panes lay out the same lines: tests/tui/test_tui_panes_compiled.py), and a report without
them prints as it always did."""

from __future__ import annotations

from dataclasses import replace

from playground.cli import textreport
from playground.engine import exports
from playground.engine.report import (
    BreakSite,
    CompiledModule,
    ConfigSetting,
    GraphAnatomy,
    GraphBreak,
    GuardCost,
    KernelsProfile,
    KernelTime,
    OpTime,
    Report,
    Timings,
)
from playground.engine.wording import breaks, compiled, timings

SITE = BreakSite(
    file="/x/loop.py",
    line=36,
    gb_id="GB0170",
    gb_type="Data-dependent branching",
    count=3,
    categories=("FUNDAMENTAL",),
    caused=("graph break in loop",),
)
ANATOMY = GraphAnatomy(
    graph=1,
    compile_id="0/0",
    fx_nodes=10,
    ops=7,
    aot_autograd_cache="miss",
    modules=(
        CompiledModule(
            post_grad_nodes=7,
            kernels=("cpp_fused_add_cos_0", "cpp_fused_tanh_1"),
            extern_kernels=("mm",),
            fx_graph_cache="hit",
        ),
    ),
    config=(ConfigSetting(module="inductor", name="fallback_random", value="True", default="False"),),
)
PROFILE = KernelsProfile(
    timed_call=1,
    calls=30,
    compiled_us=460.0,
    lookup_us=8.0,
    kernels_us=300.0,
    kernels=(
        KernelTime(name="mm", kind="extern", us=220.0, share=0.48, aten_ops=("aten.mm",), lines=(34,)),
        KernelTime(name="cpp_fused_add_cos_0", kind="cpp", us=29.0, share=0.06, lines=(31, 32)),
    ),
    eager_us=540.0,
    eager_ops=(OpTime(name="aten::mm", us=204.0),),
)
TIMINGS = Timings(compile_s=1.0, eager_ms=0.5, compiled_ms=0.4, speedup=1.25, eager_runs=10, compiled_runs=10)
GUARDS = GuardCost(guards_evaluated=138, check_us=3.3, compiled_us=27.0, share=0.12, entries_tried=1)
REPORT = Report(
    graph_count=1,
    graph_breaks=(GraphBreak(reason="Data-dependent branching", gb_id="GB0170", line=36, count=3),),
    break_sites=(SITE,),
    compile_anatomy=(ANATOMY,),
    kernels_profile=PROFILE,
    guard_cost=GUARDS,
    timings=TIMINGS,
)


def test_a_break_hit_in_a_loop_is_one_distinct_row_with_its_count_and_torch_s_category():
    lines = [line.text for line in breaks.distinct_lines(REPORT)]
    assert lines[0] == "distinct breaks: 1 site, 3 records"
    assert lines[1] == "line 36  Data-dependent branching  x3  [GB0170]  fundamental: rewrite the code"
    assert lines[2] == "then: graph break in loop"


def test_each_compile_says_its_nodes_kernels_caches_and_the_config_in_force():
    text = [line.text for line in compiled.anatomy_lines(REPORT)]
    assert text[1] == "graph 1 [0/0]: 10 FX nodes (7 ops), AOT cache miss"
    assert text[2] == "forward: 7 post-grad nodes, 2 kernels, library: mm, FX cache hit"
    assert text[3] == "config not at torch's default: inductor.fallback_random=True"


def test_each_kernel_has_its_time_share_and_snippet_lines_and_eager_stands_beside():
    text = [line.text for line in compiled.kernel_lines(REPORT)]
    assert text[0].startswith("kernels of call 1, profiled in a pass of their own (30 calls")
    assert "kernels 300 us (65%)" in text[1] and "guards and cache lookup 8.0 us" in text[1]
    assert text[2] == "mm [extern]  220 us (48%)  line 34  (aten.mm)"
    assert text[3] == "cpp_fused_add_cos_0  29 us (6%)  lines 31, 32"
    assert text[4] == "eager 540 us, top ops: aten::mm 204 us"


def test_the_guard_cost_is_a_timing_note_and_warns_when_it_is_a_large_share():
    assert timings.guard_line(REPORT).text == "guards: 138 guards checked per call in 3.3 us, 12% of the compiled call"
    heavy = replace(REPORT, guard_cost=replace(GUARDS, share=0.45))
    assert timings.guard_line(heavy).tag == "warn" and "small enough for guard checks to matter" in (
        timings.guard_line(heavy).text
    )
    assert any("guards: 138" in line.text for line in timings.timing_notes(REPORT, TIMINGS))


def test_the_text_report_and_the_markdown_carry_every_new_line():
    text = textreport.render(replace(REPORT, graph_break_count=3))
    markdown = exports.markdown_report(replace(REPORT, graph_break_count=3))
    for fact in ("x3  [GB0170]", "FX cache hit", "cpp_fused_add_cos_0  29 us", "guards: 138 guards"):
        assert fact in text, fact
    for fact in ("x3  [GB0170]", "## Compiled code", "fallback_random=True", "guards: 138"):
        assert fact in markdown, fact


def test_a_report_without_them_prints_as_before():
    plain = Report(graph_count=1, timings=TIMINGS)
    assert breaks.distinct_lines(plain) == () and compiled.anatomy_lines(plain) == ()
    assert compiled.kernel_lines(plain) == () and not timings.guard_line(plain).pieces
    assert "what each compile made" not in textreport.render(plain)
    assert "## Compiled code" not in exports.markdown_report(plain)


# One snippet line's kernels (the Source pane's line cursor): the facts, worded once.
def _line(report: Report, line: int, text: str = "x = y", ask: str = "") -> list[str]:
    return [item.text for item in compiled.line_kernel_lines(report, line, text, ask=ask)]


def test_a_fused_line_names_its_kernel_time_share_ops_and_the_lines_fused_with_it():
    fused = replace(PROFILE.kernels[1], aten_ops=("aten.add", "aten.cos"))
    report = replace(REPORT, kernels_profile=replace(PROFILE, kernels=(PROFILE.kernels[0], fused)))
    assert _line(report, 32) == [
        "line 32: 1 kernel, 29 us of the 460 us call (6%)",
        "cpp_fused_add_cos_0  29 us (6%)",
        "holds aten.add, aten.cos",
        "fused with line 31: one kernel for their ops",
    ]
    assert compiled.line_kernel_label(compiled.kernels_by_line(report)[32], 32) == (
        "KERNEL cpp_fused_add_cos_0 29 us (6%), lines 31-32"
    )


def test_a_line_that_only_calls_a_library_kernel_says_inductor_wrote_none():
    lines = _line(REPORT, 34)
    assert lines[0] == "line 34: 1 library kernel, 220 us of the 460 us call (48%)"
    assert lines[1] == "Inductor wrote no kernel for it: its op calls a library (extern)"
    assert lines[2] == "mm (library kernel)  220 us (48%)"
    assert lines[3:] == ["holds aten.mm", "from this line alone"]
    assert compiled.line_kernel_label(compiled.kernels_by_line(REPORT)[34], 34) == "LIBRARY KERNEL mm 220 us (48%)"


def test_a_line_without_a_kernel_says_why_plainly():
    assert _line(REPORT, 33, "") == ["line 33 is blank: no code, no kernel"]
    assert _line(REPORT, 33, "    # the chain") == ["line 33 is a comment: no code, no kernel"]
    # REPORT breaks at line 36: that line runs in Python, between the graphs.
    assert _line(REPORT, 36, "if x.sum() > 0:") == [
        "line 36: no kernel; the graph breaks here",
        "what the line does runs in Python, between the compiled graphs",
    ]
    outside = _line(REPORT, 40, "yield torch.randn(4)")
    assert outside[0] == "line 40: no kernel of call 1 came from this line; it runs"
    assert outside[1].startswith("outside the compiled graph") and outside[2].startswith("in other calls only")


def test_without_a_profile_the_line_says_how_to_get_one_or_that_it_is_coming():
    plain = replace(REPORT, kernels_profile=None)
    assert _line(plain, 32, ask="press k") == [
        "line 32: this run has no kernels profile: press k to profile them",
        "it costs each run a profiler pass and a compile with provenance",
    ]
    # Already asked (ask ""), and the run ended without one: no advice to ask again.
    assert _line(plain, 32) == ["line 32: this run has no kernels profile (it ended before the profile)"]
    assert _line(replace(plain, stage="diagnostics"), 32, ask="press k") == [
        "line 32: kernels pending (profiled after the timing)"
    ]


def test_another_backend_has_no_kernels_and_the_line_says_why():
    eager = replace(
        REPORT, kernels_profile=KernelsProfile(note="not profiled: only Inductor writes kernels (backend eager)")
    )
    assert _line(eager, 32) == ["line 32: no kernels", "not profiled: only Inductor writes kernels (backend eager)"]
    assert (
        compiled.kernels_by_line(eager) == {} and compiled.kernels_by_line(replace(REPORT, kernels_profile=None)) == {}
    )


def test_kernels_from_several_graphs_name_their_graph_and_the_profile_s_note_follows():
    two = (
        KernelTime(graph=1, name="cpp_fused_sin_0", kind="cpp", us=10.0, share=0.1, lines=(31,)),
        KernelTime(graph=2, name="cpp_fused_cos_0", kind="cpp", us=5.0, share=0.05, lines=(31,)),
    )
    profile = replace(PROFILE, compiled_us=100.0, kernels=two, note="the profiled calls compiled again")
    lines = _line(replace(REPORT, kernels_profile=profile), 31)
    assert lines[0] == "line 31: 2 kernels, 15 us of the 100 us call (15%)"
    assert "cpp_fused_sin_0 (graph 1)  10 us (10%)" in lines and "cpp_fused_cos_0 (graph 2)  5.0 us (5%)" in lines
    assert lines[-1] == "the profiled calls compiled again"
    label = compiled.line_kernel_label(compiled.kernels_by_line(replace(REPORT, kernels_profile=profile))[31], 31)
    assert label == "KERNELS cpp_fused_sin_0 10 us (10%), +1 more"
