"""Why it recompiled, on real workers: what torch 2.13 reports, shaped per argument."""

from __future__ import annotations

from playground.cli.textreport import render
from playground.engine.report import Report
from playground.engine.settings import Settings

from .conftest import run

LR = """
import math
import torch

def fn(w, lr):
    return w - lr * w

def inputs():
    w = torch.ones(4)
    for step in range(10):
        yield w, 0.1 * (1 + step)
"""

SIZE_ONE = """
import torch

def fn(x):
    return (x * 2).sum(0)

def inputs():
    return [torch.ones(n, 8) for n in (2, 3, 1)]
"""


def test_float_argument_lists_old_and_new_value_and_line(worker, snippet):
    report = run(worker, snippet(LR), Settings(backend="eager", dynamic=False))
    first = report["recompile_details"][0]
    assert first["function"] == "fn" and first["entry"] == "0/1" and first["call"] == 2
    (row,) = first["reasons"]
    assert (row["arg"], row["guard"], row["was"], row["now"], row["line"]) == ("lr", "lr == 0.1", "0.1", "0.2", 5)
    # Each recompile is one row, however many older entries failed on lr too.
    assert all(len(rc["reasons"]) == 1 for rc in report["recompile_details"])
    assert report["recompile_details"][2]["reasons"][0]["entries"] == ["0/2", "0/1", "0/0"]


def test_limit_names_function_limit_and_argument(worker, snippet):
    report = run(worker, snippet(LR), Settings(backend="eager", dynamic=False))
    (limit,) = report["recompile_limit_details"]
    assert (limit["function"], limit["limit"], limit["arg"]) == ("fn", 8, "lr")
    assert limit["doc"].startswith("https://")
    assert report["recompile_details"][-1]["entry"] is None  # the attempt that hit the limit made no entry
    text = render(Report.from_dict(report))
    assert "recompile_limit = 8, used up by changes of lr" in text


def test_each_call_names_the_entry_that_served_it(worker, snippet):
    report = run(worker, snippet(LR), Settings(backend="eager", dynamic=False))
    calls = report["call_entries"]
    assert [c["status"] for c in calls] == ["compiled"] * 8 + ["eager"] * 2
    assert [c["entry"] for c in calls[:3]] == ["0/0", "0/1", "0/2"]
    assert (
        calls[2]["summary"]
        == "call 3 ran entry 0/2 (compiled now: recompiled because lr changed 0.2 -> 0.30000000000000004)"
    )
    assert "recompile_limit hit on this call" in calls[8]["summary"]


def test_cached_entry_is_named_when_a_value_comes_back(worker, snippet):
    source = LR.replace("0.1 * (1 + step)", "0.1 * (1 + step % 2)")
    report = run(worker, snippet(source), Settings(backend="eager", dynamic=False))
    statuses = [(c["status"], c["entry"]) for c in report["call_entries"][:4]]
    assert statuses == [("compiled", "0/0"), ("compiled", "0/1"), ("cached", "0/0"), ("cached", "0/1")]


def test_guards_carry_their_snippet_line_and_internal_ones_fold(worker, snippet):
    report = run(worker, snippet(LR), Settings(backend="eager", dynamic=False))
    guards = report["guard_details"][0]["guards"]
    user = [g for g in guards if not g["internal"]]
    assert any(g["kind"] == "EQUALS_MATCH" and g["arg"] == "lr" and g["line"] == 5 for g in user)
    assert any(g["kind"] == "TENSOR_MATCH" and g["arg"] == "w" for g in user)
    internal_kinds = {g["kind"] for g in guards if g["internal"]}
    assert {"GLOBAL_STATE", "TORCH_FUNCTION_MODE_STACK", "DEFAULT_DEVICE"} <= internal_kinds


def test_dynamic_true_size_one_shows_symbol_and_specialization(worker, snippet):
    report = run(worker, snippet(SIZE_ONE), Settings(backend="eager", dynamic=True))
    assert report["graph_count"] == 2
    symbols = {(s["compile_id"], s["source"]): s for s in report["shape_symbols"]}
    batch = symbols[("0/0", "x.size()[0]")]
    assert batch["range"] == "[2, int_oo]" and batch["line"] == 4 and batch["dim"] == 0
    spec = [s for s in report["specializations"] if s["source"] == "x.size()[0]"]
    assert spec and spec[0]["compile_id"] == "0/1" and spec[0]["value"] == "1"
    assert "0/1 specialization" in spec[0]["reason"]
    (rc,) = report["recompile_details"]
    assert rc["reasons"][0]["guard"] == "2 <= x.size()[0]" and rc["reasons"][0]["now"] == "size()[0] = 1"
