"""Recompile reasons read once, in the worker (playground/worker/capture/reasons.py): each
failure with the entry it failed against, its check and torch's comment apart, its context
lines, and the index of the guard it names in that entry; the views read `Recompile.failures`."""

from __future__ import annotations

import json
from pathlib import Path

from playground.engine.report import GuardSet, Recompile, Report
from playground.worker.capture import reasons
from tests.engine.conftest import run

FIXTURES = Path(__file__).resolve().parents[1] / "tui" / "fixtures"


def test_guards_match_torch_log_spelling_and_tensor_reasons():
    data = json.loads((FIXTURES / "break.json").read_text())
    data["guards"].append(
        {
            "compile_id": "1/1",
            "guards": [
                "TYPE_MATCH: ___check_type_id(L['___stack0'], 1)  # if x:  # s.py:3 in f",
                "LAMBDA_GUARD: L['___stack0'] <= 0.0  # if x:  # s.py:3 in f",
            ],
        }
    )
    recompile = Recompile(
        function="f",
        compile_id="1/2",
        reasons=(
            "1/1: ___stack0 <= 0.0  # if x:  # s.py:3 in f",
            "User stack trace:",
            "0/0: tensor 'x' size mismatch at index 0. expected 8, actual 4",
        ),
    )
    guards = Report.from_dict(data).guards
    failures = reasons.failures(recompile, guards)
    assert [(f.entry, f.guard, f.check) for f in failures] == [
        ("1/1", 1, "___stack0 <= 0.0"),
        ("0/0", 4, "tensor 'x' size mismatch at index 0. expected 8, actual 4"),  # the TENSOR_MATCH of L['x']
    ]
    assert failures[0].comment == "# if x:  # s.py:3 in f"
    assert failures[0].context == ("User stack trace:",)


def test_reason_context_lines_stay_with_their_failure():
    failures = reasons.parse_reasons(["1/0: a == 1  # src", "User stack trace:", "  File x", "0/0: b"])
    assert [(f.entry, f.check, f.comment, f.context) for f in failures] == [
        ("1/0", "a == 1", "# src", ("User stack trace:", "File x")),
        ("0/0", "b", "", ()),
    ]


def test_a_reason_for_an_entry_without_that_guard_names_none():
    recompile = Recompile(reasons=("0/0: L['lr'] == 0.1  # lr = 0.1",))
    (failure,) = reasons.failures(recompile, (GuardSet(compile_id="0/0", guards=("EQUALS_MATCH: L['n'] == 3",)),))
    assert (failure.entry, failure.check, failure.guard) == ("0/0", "L['lr'] == 0.1", None)


def test_failures_travel_on_the_wire_and_are_absent_when_empty():
    recompile = reasons.read((Recompile(function="f", reasons=("0/0: x == 1",)),), ())[0]
    data = recompile.to_dict()
    assert data["failures"] == [{"entry": "0/0", "check": "x == 1", "comment": "", "context": [], "guard": None}]
    assert Recompile.from_dict(data) == recompile
    assert "failures" not in Recompile(function="f").to_dict()


RECOMPILES = """
import torch

def fn(x, n):
    return (torch.relu(x) * n).sum()

def inputs():
    return [(torch.randn(4), 2), (torch.randn(6), 3), (torch.randn(5), 4)]
"""


def test_a_snippet_whose_name_holds_a_newline_counts_its_recompiles(worker, snippet):
    """torch's recompile line names the file, newline and all: read across it, as a break's is."""
    odd = run(worker, snippet(RECOMPILES, name="new\nline.py"))
    plain = run(worker, snippet(RECOMPILES, name="plain.py"))
    assert plain["recompile_count"] >= 1
    assert odd["recompile_count"] == plain["recompile_count"]
    assert [r["line"] for r in odd["recompiles"]] == [r["line"] for r in plain["recompiles"]]
