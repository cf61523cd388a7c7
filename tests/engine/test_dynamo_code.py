"""Issue 12: the code Dynamo wrote, decompiled by depyf in the run's child, on real workers."""

from __future__ import annotations

from pathlib import Path

import pytest

from playground.worker import dynamo_code

from .conftest import run

GALLERY = Path(__file__).resolve().parents[2] / "snippets"


def test_off_by_default(worker):
    report = run(worker, str(GALLERY / "default.py"))
    assert report["dynamo_code"] is None


def test_resume_function_names_its_break_line(worker):
    pytest.importorskip("depyf", reason="depyf is not installed in this environment")
    # default.py: print() on line 33 breaks the graph; torch resumes after it.
    report = run(worker, str(GALLERY / "default.py"), dynamo_code=True)
    assert report["error"] is None
    items = report["dynamo_code"]
    kinds = [(i["kind"], i["function"]) for i in items]
    assert ("transformed", "fn") in kinds and ("guard", "fn") in kinds
    (resume,) = [i for i in items if i["kind"] == "resume"]
    assert resume["name"] == "torch_dynamo_resume_in_fn_at_33"
    assert resume["resumes_at_line"] == 33
    assert "return torch.cos(y) + 1" in resume["source"]
    transformed = next(i for i in items if i["kind"] == "transformed" and i["function"] == "fn")
    assert "print" in transformed["source"] and "__resume_at_" in transformed["source"]
    guard = next(i for i in items if i["kind"] == "guard" and i["function"] == "fn")
    assert "check_tensor(L['x']" in guard["source"]
    assert report["dynamo_code_note"].startswith("decompiled by depyf")


def test_no_break_no_resume(worker):
    pytest.importorskip("depyf", reason="depyf is not installed in this environment")
    report = run(worker, str(GALLERY / "pure_function.py"), dynamo_code=True)
    assert report["dynamo_code"] and not [i for i in report["dynamo_code"] if i["kind"] == "resume"]


def test_parser_keeps_sections_apart():
    text = (
        "def __guard_0_for_torch_dynamo_resume_in_f_at_7(L, G, **___kwargs_ignored):\n"
        "    return True\n\n"
        "def __transformed_code_0_for_torch_dynamo_resume_in_f_at_7(y):\n    return y\n\n"
        "def __resume_at_20_1(y):\n    return y + 1\n\n"
        "def transformed___resume_at_20_1(y):\n    pass\n"
        "#============ end of __resume_at_20_1 ============#\n"
        "def __transformed_code_0_for_f(x):\n    return x\n\n"
        "def f(x):\n    return x\n"
        "#============ end of f ============#\n"
    )
    items = dynamo_code.parse_full_code(text)
    assert [(i["kind"], i["name"], i["resumes_at_line"]) for i in items] == [
        ("guard", "__guard_0_for_torch_dynamo_resume_in_f_at_7", 7),
        ("transformed", "__transformed_code_0_for_torch_dynamo_resume_in_f_at_7", 7),
        ("resume", "torch_dynamo_resume_in_f_at_7", 7),
        ("transformed", "__transformed_code_0_for_f", None),
    ]
