"""The guard what-if in words, once: the filter's savings with the risk named from what it
dropped, a filter that drops nothing saying so, the stance with one entry or several, a what-if
that stopped; the text report and the Markdown export lay out the same lines, and a report
without the key prints as it always did."""

from __future__ import annotations

from dataclasses import replace

from playground.cli import textreport
from playground.engine import exports
from playground.engine.report import FilterPreview, GuardWhatIf, Report
from playground.engine.wording import guard_what_if
from playground.engine.wording.line import BAD, GOOD, WARN

MODULE = GuardWhatIf(
    timed_call=2,
    target="module",
    filter="skip_guard_on_inbuilt_nn_modules_unsafe",
    filter_guards=70,
    dropped=34,
    dropped_sources=("self[0]", "self[1]", "self[2]"),
    entries_before=1,
    entries_after=1,
    guards_before=45,
    guards_after=28,
    check_us_before=2.7,
    check_us_after=1.8,
    check_noise_us=0.2,
    lookup_us_before=10.2,
    lookup_us_after=6.9,
    lookup_noise_us=4.0,
    call_us_before=186.5,
    call_us_after=224.8,
    call_noise_us=117.3,
    outputs_agree=True,
    output_max_abs=0.0,
    stance_lookup_us=7.4,
    stance_call_us=180.0,
    stance_probe_stale=True,
    preview=(
        FilterPreview("skip_guard_on_inbuilt_nn_modules_unsafe", 34),
        FilterPreview("skip_guard_on_all_nn_modules_unsafe", 47),
    ),
)
REPORT = Report(torch_version="2.13.0", snippet="/x/mlp_module.py", calls=2, guard_what_if=MODULE)


def texts(what: GuardWhatIf) -> list[str]:
    return [line.text for line in guard_what_if.what_if_lines(replace(REPORT, guard_what_if=what))]


def test_the_filter_says_what_it_dropped_what_it_saved_and_the_risk_it_takes():
    lines = guard_what_if.what_if_lines(REPORT)
    text = "\n".join(line.text for line in lines)
    assert lines[0].text.startswith("guard what-if: torch's unsafe guard switches on call 2")
    assert "torch.compiler.skip_guard_on_inbuilt_nn_modules_unsafe for a module: dropped 34 of 70" in text
    assert "timed call's entry 45 -> 28 leaf guards" in text
    assert "guard check 2.7 us -> 1.8 us (noise ±0.2 us)" in text
    assert "cache lookup (profiler) 10.2 us -> 6.9 us (within this machine's noise, ±4.0 us)" in text
    assert "compiled call 186.5 us -> 224.8 us (within this machine's noise, ±117.3 us)" in text
    agree = next(line for line in lines if "outputs under the filter" in line.text)
    assert agree.tag == GOOD and "equal the outputs without it on call 2's inputs" in agree.text
    risk = next(line for line in lines if line.text.startswith("risk: if an attribute"))
    assert risk.tag == WARN and "self[0], self[1], self[2] is replaced after compile" in risk.text
    # the other filters' drops, without the one applied
    assert "torch's other filters would drop: skip_guard_on_all_nn_modules_unsafe 47" in text
    assert "skip_guard_on_inbuilt_nn_modules_unsafe 34" not in text


def test_a_filter_that_drops_nothing_says_so_and_compares_nothing():
    lines = texts(replace(MODULE, dropped=0, dropped_sources=(), guards_after=45, preview=()))
    assert any("dropped none of the 70 guards Dynamo handed it: nothing saved, nothing risked here" in t for t in lines)
    assert not any(t.lstrip().startswith(("timed call's entry", "risk: if an attribute")) for t in lines)


def test_outputs_that_differ_under_the_filter_are_bad_news():
    what = replace(MODULE, outputs_agree=False, output_max_abs=0.5)
    line = next(x for x in guard_what_if.what_if_lines(replace(REPORT, guard_what_if=what)) if "DIFFER" in x.text)
    assert line.tag == BAD and "(max abs diff 0.5)" in line.text


def test_globals_risk_names_the_globals():
    what = replace(
        MODULE, target="function", filter="skip_guard_on_globals_unsafe", dropped=3, dropped_sources=("torch",)
    )
    assert any("risk: if torch is rebound after compile, the compiled code keeps what it saw" in t for t in texts(what))


def test_the_stance_with_one_entry_checks_nothing_and_with_several_only_what_tells_them_apart():
    one = "\n".join(texts(MODULE))
    assert "set_stance(skip_guard_eval_unsafe=True), no recompile: one cache entry, so no guard is checked" in one
    assert "cache lookup 10.2 us -> 7.4 us (profiler)" in one
    assert "measured on this torch: a function compiled for flag=True, called with flag=False" in one
    several = "\n".join(texts(replace(MODULE, entries_before=3, stance_probe_stale=None)))
    assert "3 cache entries, so only the guards that tell them apart are checked" in several
    assert "measured on this torch" not in several


def test_a_stance_torch_refused_says_what_torch_raised_instead_of_figures():
    what = replace(MODULE, stance_lookup_us=None, stance_call_us=None, stance_error="RuntimeError: Recompilation")
    lines = [x for x in guard_what_if.what_if_lines(replace(REPORT, guard_what_if=what)) if "set_stance" in x.text]
    assert [x.text for x in lines] == [
        "torch.compiler.set_stance(skip_guard_eval_unsafe=True): torch refused the timed call under it "
        "(RuntimeError: Recompilation)"
    ]
    assert lines[0].tag == WARN


def test_more_entries_under_the_filter_say_why_they_may_differ():
    lines = texts(replace(MODULE, entries_before=2, entries_after=1))
    assert any("the calls made 1 cache entry under the filter, the run 2" in t for t in lines)


def test_a_what_if_that_stopped_says_why_and_shows_what_it_measured():
    what = GuardWhatIf(
        timed_call=2,
        target="function",
        filter="skip_guard_on_globals_unsafe",
        entries_before=1,
        guards_before=13,
        check_us_before=1.3,
        note="the what-if stopped: RuntimeError: tick",
    )
    lines = texts(what)
    assert lines[-1].strip() == "not measured further: the what-if stopped: RuntimeError: tick"
    assert not any("guard filter" in t or "set_stance" in t for t in lines)


def test_the_text_report_and_the_markdown_export_lay_out_the_same_lines():
    text = textreport.render(REPORT)
    markdown = exports.markdown_report(REPORT)
    for line in guard_what_if.what_if_lines(REPORT):
        assert line.text in text
    assert "### Guard what-if" in markdown
    assert "`torch.compiler.skip_guard_on_inbuilt_nn_modules_unsafe`" in markdown
    assert "- risk: if an attribute, parameter or submodule of self[0]" in markdown


def test_a_report_without_the_key_prints_as_before():
    bare = replace(REPORT, guard_what_if=None)
    assert guard_what_if.what_if_lines(bare) == ()
    assert "guard what-if" not in textreport.render(bare)
    assert "Guard what-if" not in exports.markdown_report(bare)
    assert "guard_what_if" not in bare.to_dict()


def test_the_key_reads_back_strictly():
    wire = REPORT.to_dict()
    assert Report.from_dict(wire, strict=True).guard_what_if == MODULE
    assert Report.from_dict({**wire, "guard_what_if": None}, strict=True).guard_what_if is None
