"""How the app words what a run found: a fullgraph refusal is a result, a missing backend
package is said plainly, `b` cycles only backends that work here, and a far-from-1x speedup
carries its reason. Canned reports and the fake engine only."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

from tui_fakes import (
    FIXTURES,
    HELLO,
    FakeEngine,
    bar_text,
    base_report,
    canned,
    load_fixture,
    plain,
    pressing,
    rule_report,
    settle,
    snapshot_app,
)

from playground.cli.textreport import render
from playground.engine.report import Report, RunError
from playground.engine.wording.timings import speedup_reasons, timing_notes
from playground.worker.capture.refusals import read_error
from tui.factory import make_app
from tui.panes import render_breaks, render_source, render_timings
from tui.run.findings import missing_backend, refusal_words, refused_break

ROOT = Path(__file__).resolve().parents[2]

#: The tail of a real refusal's traceback (print_top.py under fullgraph, torch 2.13).
PRINT_DETAIL = (
    "torch._dynamo.exc.Unsupported: Failed to trace builtin operator\n"
    "  Explanation: Dynamo does not know how to trace builtin operator `print` with argument types "
    "['str', 'Tensor'] (has_kwargs False)\n"
    "  Hint: Avoid calling builtin `print` with argument types ['str', 'Tensor']. Consider using an "
    "equivalent alternative function/method to `print`.\n"
    "  Hint: Please report an issue to PyTorch.\n\n"
    " For more details about this graph break, please visit: "
    "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0059.html\n"
)
TVM_DETAIL = (
    "torch._dynamo.exc.BackendCompilerFailed: backend='counting_backend' raised:\n"
    "ImportError: Please install apache-tvm to use the tvm backend. See "
    "https://tvm.apache.org/docs/install/index.html for instructions.\n"
)


def worker_error(error: dict, fullgraph: bool) -> dict:
    """A canned error as the worker sends it: torch's text read into its typed fields."""
    return read_error(RunError.from_dict(error), fullgraph).to_dict()


def report(name: str, **changes) -> Report:
    data = load_fixture(name)
    data.update(changes)
    if "error" in changes:
        settings = data["settings"]
        data["error"] = worker_error(changes["error"], bool(settings.get("fullgraph")))
    return Report.from_dict(data)


def print_refusal() -> Report:
    error = {
        "kind": "compile",
        "type": "Unsupported",
        "message": "compiled call 1 raised: Failed to trace builtin operator",
        "line": 33,
        "detail": PRINT_DETAIL,
    }
    return report("fullgraph_refusal", error=error)


# The refusal, read from the report.
def test_a_fullgraph_refusal_is_read_as_the_refused_break():
    site = refused_break(print_refusal())
    assert site is not None
    assert (site.line, site.reason, site.gb_id) == (33, "Failed to trace builtin operator", "GB0059")
    assert site.explanation.startswith("Dynamo does not know how to trace builtin operator `print`")
    assert len(site.hints) == 2 and site.hint.startswith("Avoid calling builtin `print`")
    assert refusal_words(print_refusal()) == (
        "fullgraph=True refused the break at line 33: Unsupported: Failed to trace builtin operator (GB0059)"
    )


def test_only_a_break_refused_under_fullgraph_is_a_refusal():
    refusal = load_fixture("fullgraph_refusal")
    assert refused_break(Report.from_dict(refusal)) is not None
    error = {k: v for k, v in refusal["error"].items() if k != "refused"}  # as torch's text came
    assert worker_error(error, fullgraph=True)["refused"] == refusal["error"]["refused"]
    assert "refused" not in worker_error(error, fullgraph=False)
    for kind, type_ in (("snippet", "Unsupported"), ("compile", "BackendCompilerFailed"), ("worker", "WorkerDied")):
        other = worker_error(dict(error, kind=kind, type=type_), fullgraph=True)
        assert refused_break(Report.from_dict(dict(refusal, error=other))) is None, (kind, type_)
    # float .item() in an `if` under fullgraph: Dynamo refuses to guard on it (TORCH_NOTES.md).
    message = "compiled call 1 raised: Consider annotating your code using torch._check*(). Could not guard on data-dependent expression zuf0 > 0.0"
    float_item = worker_error(dict(error, type="UserError", message=message), fullgraph=True)
    assert refusal_words(Report.from_dict(dict(refusal, error=float_item))) == (
        "fullgraph=True refused the break at line 10: UserError: Could not guard on data-dependent expression zuf0 > 0.0"
    )
    assert refused_break(report("break")) is None


def test_source_marks_the_refused_line_as_a_break_and_heads_with_the_refusal():
    refusal = report("fullgraph_refusal")
    text = plain(render_source((FIXTURES / "branch.py").read_text(), refusal, refusal.error))
    assert text.startswith("fullgraph=True refused the break at line 10: Unsupported: Data-dependent")
    marked = next(line for line in text.splitlines() if "if y.sum() > 0:" in line)
    assert marked.split()[:2] == ["10", "B"]
    assert "REFUSED by fullgraph=True: Data-dependent branching" in text
    assert "ERROR" not in text and "STALE" not in text


def test_breaks_pane_shows_the_refused_break_with_torchs_words():
    text = plain(render_breaks(print_refusal()), width=200)
    assert text.startswith("fullgraph=True refused this graph break  (graphs 0)")
    assert "line 33  Failed to trace builtin operator  [GB0059]" in text
    assert "why: Dynamo does not know how to trace builtin operator `print`" in text
    assert "hint: Please report an issue to PyTorch." in text


# Backends.
def test_a_missing_backend_package_is_said_plainly():
    error = {"kind": "compile", "type": "BackendCompilerFailed", "message": "raised", "detail": TVM_DETAIL}
    tvm = report("break", error=error, settings={"backend": "tvm", "fullgraph": False})
    assert missing_backend(tvm) == (
        "backend tvm needs a package that is not installed here: Please install apache-tvm to use the tvm backend"
    )
    invalid = {"kind": "settings", "type": "InvalidBackend", "message": "backend 'onnxrt' is not available"}
    assert "backend onnxrt is not available in this torch" in missing_backend(
        report("break", error=invalid, settings={"backend": "onnxrt"})
    )
    other = dict(error, detail="RuntimeError: a real bug in a backend")
    assert missing_backend(report("break", error=other)) == ""
    assert missing_backend(report("break")) == ""


def tvm_is_missing(text, settings):
    result = rule_report(text, settings)
    if settings.backend == "tvm":
        result.update(
            graph_count=0,
            equivalence=None,
            timings=None,
            error=worker_error(
                {"kind": "compile", "type": "BackendCompilerFailed", "message": "raised", "detail": TVM_DETAIL}, False
            ),
        )
    return result


async def test_b_cycles_cudagraphs_only_with_cuda(snippet: Path):
    app = make_app(snippet, engine=FakeEngine(hello=HELLO | {"cuda_available": True}), watch=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        seen = []
        for _ in range(4):
            await pilot.press("b")
            seen.append(app.settings.backend)
        assert seen == ["aot_eager", "inductor", "cudagraphs", "eager"]
        await settle(pilot)


async def test_other_backends_are_in_the_palette_and_a_missing_one_says_so(snippet: Path):
    engine = FakeEngine(tvm_is_missing)
    app = make_app(snippet, engine=engine, watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"backend tvm")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(pilot)
        assert engine.runs[-1][1].backend == "tvm"
        summary = bar_text(app)
        assert "error: backend tvm needs a package that is not installed here: Please install apache-tvm" in summary
        assert any("not one that b cycles" in n.message for n in app._notifications)
        await pilot.press("b")  # off the cycle: b goes back to its start
        await settle(pilot)
        assert app.settings.backend == "eager" and "error" not in bar_text(app)


# Speedups.
def test_a_slow_speedup_names_its_reasons_from_the_report():
    reasons = speedup_reasons(report("break"))
    assert reasons == (
        "tiny input (eager 0.012 ms): call overhead dominates on CPU",
        "1 graph break: 2 graphs with Python between them (line 10: Data-dependent branching)",
        "backend eager does not optimise the graph: only the overhead shows",
    )
    assert "recompile limit hit: Dynamo fell back to eager" in speedup_reasons(report("recompile_limit"))


def test_torch_cond_in_the_graph_explains_a_large_speedup():
    graph = {"index": 0, "code": "cond = torch.ops.higher_order.cond(gt, t, f, (y,))"}
    timings = dict(load_fixture("break")["timings"], eager_ms=11.3, compiled_ms=0.24, speedup=47.8)
    fast = report("break", timings=timings, graphs=[graph])
    assert speedup_reasons(fast) == ("eager torch.cond is slow: the compiled graph runs it as one op",)


def test_no_reason_is_claimed_without_a_field_to_back_it():
    # Inside the band: nothing to explain.
    assert speedup_reasons(report("equivalence_fail")) == ()
    # Far outside it, but inductor, no break, no tiny call, no cond: no reason known.
    timings = dict(load_fixture("break")["timings"], eager_ms=5.0, compiled_ms=20.0, speedup=0.25)
    slow = report("equivalence_fail", timings=timings)
    assert speedup_reasons(slow) == () and not any(
        line.text.startswith("why") for line in timing_notes(slow, slow.timings)
    )
    fast = report("equivalence_fail", timings=dict(timings, compiled_ms=1.0, speedup=5.0))
    assert speedup_reasons(fast) == ()
    assert speedup_reasons(report("fullgraph_refusal")) == ()  # not timed


def test_timing_pane_gives_the_reason_and_what_was_timed():
    text = plain(render_timings(report("break")), width=120)
    assert "speedup 0.22x  with graphs 2  breaks 1" in text
    assert "why: tiny input (eager 0.012 ms): call overhead dominates on CPU" in text
    assert "timed: call 1 of 2 of inputs(), forward only (no backward)" in text
    inside = plain(render_timings(report("equivalence_fail")), width=120)
    assert "why:" not in inside and "timed: call 1 of 1 of inputs(), forward only" in inside


def test_check_text_report_gives_the_reason():
    text = render(report("break"))
    assert "  why 0.22x: tiny input (eager 0.012 ms): call overhead dominates on CPU" in text
    assert "why" not in render(report("equivalence_fail"))


def test_speedup_reason_classes_are_frozen_values():
    # The reasons read a frozen Report: computing them changes nothing.
    before = report("break")
    speedup_reasons(before)
    assert before == report("break") and dataclasses.is_dataclass(before)


# Snapshots (canned reports): the refusal's Breaks pane, and the Timing pane with its reason.
def refuse_under_fullgraph(text, settings):
    return copy.deepcopy(load_fixture("fullgraph_refusal" if settings.fullgraph else "break"))


def app_for(respond):
    return snapshot_app(respond)


def test_refusal_breaks_pane_80x24(snap_compare):
    assert snap_compare(app_for(refuse_under_fullgraph), terminal_size=(80, 24), run_before=pressing("f", "2"))


def test_timing_reasons_80x24(snap_compare):
    assert snap_compare(app_for(canned("break")), terminal_size=(80, 24), run_before=pressing("7"))


async def test_a_real_failure_after_a_refusal_is_still_stale(snippet: Path):
    def respond(text, settings):
        if "BROKEN" in text:
            result = base_report(text, settings)
            result.update(
                timings=None,
                equivalence=None,
                error={"kind": "snippet", "type": "NameError", "message": "name 'q' is not defined", "line": 3},
            )
            return result
        return rule_report(text, settings)

    app = make_app(snippet, engine=FakeEngine(respond), watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f")
        await settle(pilot)
        assert not app.main.view.stale and app.main.view.run.kind == "done"
        snippet.write_text(snippet.read_text() + "\n# BROKEN\n")
        await pilot.press("r")
        await settle(pilot)
        summary = bar_text(app)
        assert summary.startswith("STALE") and "fullgraph=True refused the break at line 10" in summary
        assert "error: snippet error at line 3: NameError" in summary
