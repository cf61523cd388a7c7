"""The code run, the template's side (playground/worker/dynamo_code/held_report.py), without a worker:
how the held report and the code child's result become the one report the client gets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from playground.engine.report import Report, RunError
from playground.engine.settings import Settings
from playground.worker.dynamo_code.held_report import CodeRun, write_json
from playground.worker.run.spine.request import WorkerRequest

ITEM = {
    "name": "torch_dynamo_resume_in_fn_at_3",
    "kind": "resume",
    "function": "torch_dynamo_resume_in_fn_at_3",
    "resumes_at_line": 3,
    "entry": None,
    "source": "def __resume_at_20_1(y):\n    return y + 1\n",
}


@pytest.fixture
def code_run():
    request = {"op": "run", "id": 7, "path": "/x/snip.py", "dynamo_code": True, "timing": True, "trace": True}
    run = CodeRun(WorkerRequest.from_message(request))
    yield run
    run.close()
    assert not Path(run.directory).exists()


def _held(**fields) -> dict:
    report = Report(torch_version="2.13.0", settings=Settings(backend="eager"), snippet="/x/snip.py", **fields)
    return {"event": "report", "id": 7, "report": report.to_dict(), "trace": {"lines": ["a"], "strings": []}}


def test_only_runs_that_ask_have_one():
    assert CodeRun.asked(WorkerRequest.from_message({"op": "run", "id": 1})) is None


def test_the_two_requests(code_run):
    first = code_run.run_request()
    assert first.report_to == code_run.report_path and first.run.flags.timing and first.run.trace
    second = code_run.code_request()
    assert second.code_to == code_run.code_path and not second.run.flags.timing and not second.run.trace
    assert second.run.path == first.run.path == "/x/snip.py"
    assert second.run.passes == first.run.passes and second.run.text == first.run.text


def test_merged_changes_only_the_two_code_fields(code_run):
    held = _held(graph_count=2, notes=("a note",))
    write_json(code_run.report_path, held)
    assert not Path(code_run.report_path + ".part").exists()
    assert code_run.held() == json.loads(json.dumps(held))
    merged = CodeRun.merged(code_run.held(), [ITEM], "decompiled by depyf 0.20.0")
    assert list(merged) == ["event", "id", "report", "trace"] and merged["trace"] == held["trace"]
    report = merged["report"]
    assert report["dynamo_code"] == [ITEM] and report["dynamo_code_note"] == "decompiled by depyf 0.20.0"
    assert {**report, "dynamo_code": None, "dynamo_code_note": ""} == held["report"]


def test_no_report_written_is_none(code_run):
    assert code_run.held() is None


def test_when_no_code_child_runs(code_run):
    held = _held()
    assert code_run.without_child(held, True, "0.20.0") is None
    items, note = code_run.without_child(held, True, None)
    assert items is None and "depyf is not installed" in note
    items, note = code_run.without_child(held, False, "0.20.0")
    assert items == [] and note.startswith("depyf failed: not run") and "ISOLATION=none" in note
    bad = _held(error=RunError(kind="settings", type="BadConfig", message="no such key"))
    assert code_run.without_child(bad, True, "0.20.0") == (None, "")


@pytest.mark.parametrize(
    ("outcome", "status", "words"),
    [
        ("timeout", {"pid": 9, "signal": "SIGKILL"}, "timed out after 12 s and was killed"),
        ("died", {"pid": 9, "signal": "SIGSEGV"}, "was killed by SIGSEGV"),
        ("died", {"pid": 9, "returncode": 70}, "exited with code 70"),
        ("ok", {"pid": 9, "returncode": 0}, "exited before writing what depyf found (the snippet called os._exit?)"),
    ],
)
def test_a_code_child_that_failed_is_named(code_run, outcome, status, words):
    items, note = code_run.result(outcome, status, 12.0)
    assert items == [] and note.startswith("depyf failed: its run of the snippet") and note.endswith(words)


def test_a_code_child_that_wrote_its_result(code_run):
    write_json(code_run.code_path, {"items": [ITEM], "note": "decompiled by depyf 0.20.0"})
    assert code_run.result("ok", {"pid": 9, "returncode": 0}, None) == ([ITEM], "decompiled by depyf 0.20.0")
    # What a child wrote before it was killed is not trusted: the kill is what is named.
    assert code_run.result("timeout", {"pid": 9, "signal": "SIGKILL"}, 5.0)[1].endswith(
        "timed out after 5 s and was killed"
    )
