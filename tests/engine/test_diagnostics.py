"""Breaks, guards, recompiles and the recompile limit, as torch itself reports them."""

from __future__ import annotations

from playground.engine.events import DiagnosticsEvent, ProgressEvent
from playground.engine.settings import Settings
from tests.requests import request_for

from .conftest import EAGER, run

PRINT_FIRST_LINE = """
import torch

def fn(x):
    print(x)
    return x.sin() + 1

def inputs():
    return [torch.ones(3)]
"""


def test_print_on_first_line_is_a_counted_break(worker, snippet):
    # torch._dynamo.explain() reports 0 breaks here; the graph_breaks log reports the break.
    report = run(worker, snippet(PRINT_FIRST_LINE))
    assert report["error"] is None
    assert report["graph_break_count"] == 1
    (site,) = report["graph_breaks"]
    assert site["line"] == 4
    assert site["gb_id"] == "GB0059"
    assert "print" in site["explanation"]
    assert site["hint"]
    assert report["graph_count"] == 1  # the sin + 1 after the break
    assert "Graph break in user code" in report["logs"]["graph_breaks"]
    assert "[__graph_breaks]" in report["logs"]["graph_breaks"]  # torch's own log format


def test_print_on_first_line_under_fullgraph_raises_with_line(worker, snippet):
    report = run(worker, snippet(PRINT_FIRST_LINE), Settings(backend="eager", fullgraph=True))
    error = report["error"]
    assert error["kind"] == "compile"
    assert error["type"] == "Unsupported"
    assert error["line"] == 4
    assert "call 1" in error["message"]


DATA_DEPENDENT_IF = """
import torch

def fn(x):
    y = x.sin()
    if y.sum() > 0:
        return y.cos()
    return y * 2

def inputs():
    torch.manual_seed(0)
    return [torch.randn(8)]
"""


def test_data_dependent_branch_breaks_and_fullgraph_refuses(worker, snippet):
    path = snippet(DATA_DEPENDENT_IF)
    report = run(worker, path)
    assert report["graph_break_count"] == 1
    assert report["graph_breaks"][0]["reason"] == "Data-dependent branching"
    assert report["graph_breaks"][0]["line"] == 5
    assert report["graph_count"] == 2
    refused = run(worker, path, Settings(backend="eager", fullgraph=True))
    assert refused["error"]["kind"] == "compile"
    assert refused["error"]["line"] == 5
    assert "Data-dependent branching" in refused["error"]["message"] + refused["error"]["detail"]


ITEM_FLAG = """
import torch

def fn(x, flag):
    if flag.item() > 0:
        return x + 1
    return x - 1

def inputs():
    x = torch.ones(3)
    return [(x, torch.tensor({one})), (x, torch.tensor({two})), (x, torch.tensor({three}))]
"""


def test_int_item_under_fullgraph_specializes_and_recompiles(worker, snippet):
    # Measured on torch 2.13/2.14: no error; Dynamo guards on the branch the value took
    # (1 <= flag.item()), so 1 and 2 share a graph and 0 recompiles.
    path = snippet(ITEM_FLAG.format(one=1, two=0, three=2))
    report = run(worker, path, Settings(backend="eager", fullgraph=True))
    assert report["error"] is None
    assert report["graph_break_count"] == 0
    assert report["recompile_count"] == 1
    assert report["graph_count"] == 2
    assert all(r["function"] == "fn" for r in report["recompiles"])
    assert any("item" in g or "u0" in g or "flag" in g for e in report["guards"] for g in e["guards"])
    assert report["equivalence"]["ok"]


def test_float_item_under_fullgraph_raises_user_error(worker, snippet):
    path = snippet(ITEM_FLAG.format(one=1.0, two=-1.0, three=2.0))
    report = run(worker, path, Settings(backend="eager", fullgraph=True))
    assert report["error"]["kind"] == "compile"
    assert report["error"]["type"] == "UserError"
    assert report["error"]["line"] == 4


def test_item_without_fullgraph_is_a_tensor_item_break(worker, snippet):
    path = snippet(ITEM_FLAG.format(one=1, two=0, three=2))
    report = run(worker, path)
    assert report["graph_break_count"] >= 1
    assert report["graph_breaks"][0]["gb_id"] == "GB0124"
    assert "Tensor.item()" in report["graph_breaks"][0]["reason"]


LEARNING_RATE = """
import torch

def fn(p, lr):
    return p - lr * p.sin()

def inputs():
    p = torch.ones(4)
    return [(p, 0.1 * (i + 1)) for i in range(12)]
"""


def test_python_float_under_static_shapes_hits_recompile_limit(worker, snippet):
    report = run(worker, snippet(LEARNING_RATE), Settings(backend="eager", dynamic=False))
    assert report["recompile_limit_hit"] is True
    assert report["graph_count"] == 8
    # torch logs the 8th recompile attempt, the one that hits the limit, then stops trying.
    assert report["recompile_count"] == 8
    assert report["recompile_limit_functions"] and report["recompile_limit_functions"][0].startswith("fn ")
    assert "recompile_limit" in report["recompile_limit_functions"][0]
    assert report["equivalence"]["ok"]  # the eager fallback is still right, just not compiled


def test_python_float_auto_dynamic_recompiles_once(worker, snippet):
    report = run(worker, snippet(LEARNING_RATE), Settings(backend="eager", dynamic=None))
    assert report["recompile_limit_hit"] is False
    assert report["graph_count"] == 2
    assert report["recompile_count"] == 1
    (recompile,) = report["recompiles"]
    assert recompile["function"] == "fn"
    assert recompile["compile_id"] == "0/1"
    assert any("lr" in reason for reason in recompile["reasons"])


def test_python_float_dynamic_true_one_graph(worker, snippet):
    report = run(worker, snippet(LEARNING_RATE), Settings(backend="eager", dynamic=True))
    assert report["graph_count"] == 1
    assert report["recompile_count"] == 0


SHAPES = """
import torch

def fn(x):
    return (x * 2).relu()

def inputs():
    return [torch.randn(n, 3) for n in (2, 3, 4, 5)]
"""


def test_shapes_under_each_dynamic_setting(worker, snippet):
    path = snippet(SHAPES)
    counts = {d: run(worker, path, Settings(backend="eager", dynamic=d))["graph_count"] for d in (None, True, False)}
    assert counts == {None: 2, True: 1, False: 4}


def test_guards_per_compiled_entry_and_failing_guard_named(worker, snippet):
    report = run(worker, snippet(SHAPES), Settings(backend="eager", dynamic=False))
    ids = [g["compile_id"] for g in report["guards"]]
    assert ids == ["0/0", "0/1", "0/2", "0/3"]
    first = report["guards"][0]
    assert first["function"] == "fn"
    assert any(g.startswith("TENSOR_MATCH") for g in first["guards"])
    reasons = [r for rc in report["recompiles"] for r in rc["reasons"]]
    assert any(r.startswith("0/0: tensor 'x' size mismatch") for r in reasons)
    assert "TREE_GUARD_MANAGER" in report["logs"]["guards"]
    assert "Recompiling function fn" in report["logs"]["recompiles"]


def test_graph_code_is_captured(worker, snippet):
    report = run(worker, snippet(SHAPES))
    graph = report["graphs"][0]
    assert graph["index"] == 1 and graph["compile_id"] == "0/0"
    assert "relu" in graph["code"]
    assert graph["op_count"] >= 2


def test_break_in_helper_points_at_the_helper_line(worker, snippet):
    path = snippet(
        """
        import torch

        def helper(x):
            torch._dynamo.graph_break()
            return x + 1

        def fn(x):
            return helper(x * 2) * 3

        def inputs():
            return [torch.ones(2)]
        """
    )
    report = run(worker, path)
    assert report["graph_break_count"] >= 1
    assert {b["line"] for b in report["graph_breaks"]} == {4}


def test_progress_events_stream_before_the_report(worker, snippet):
    events = []
    result = worker.run(request_for(snippet(SHAPES), EAGER, timing=False), events.append)
    kinds = [type(e) for e in events]
    assert kinds.index(DiagnosticsEvent) < len(kinds)
    assert set(kinds) <= {ProgressEvent, DiagnosticsEvent}  # typed events only, never dicts
    steps = [e.step for e in events if isinstance(e, ProgressEvent)]
    assert "loading" in steps and "compiling" in steps and "equivalence" in steps
    compiling = [e for e in events if isinstance(e, ProgressEvent) and e.step == "compiling"]
    assert compiling[-1].call == 4 and compiling[-1].calls == 4
    # On a slow machine Dynamo's first graphs may be reported as they are traced (stage
    # "traced"), before the calls end; the diagnostics of the whole calls come once, last.
    diags = [e.report for e in events if isinstance(e, DiagnosticsEvent)]
    assert [d.stage for d in diags] == ["traced"] * (len(diags) - 1) + ["diagnostics"]
    diag = diags[-1]
    assert diag.equivalence is None and diag.timings is None
    assert diag.graph_count == 2
    assert result.report.stage == "complete" and result.trace is None  # no trace unless asked


def test_reset_between_runs_gives_identical_counts(worker, snippet):
    path = snippet(LEARNING_RATE)
    first = run(worker, path, Settings(backend="eager", dynamic=None))
    second = run(worker, path, Settings(backend="eager", dynamic=None))
    keys = ("graph_count", "graph_break_count", "recompile_count")
    assert [first[k] for k in keys] == [second[k] for k in keys]
