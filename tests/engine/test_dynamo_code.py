"""The code Dynamo wrote, decompiled by depyf in a second child after the run (the
run itself never under depyf), on real workers."""

from __future__ import annotations

import re
import sys
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from playground.engine.client import RunCancelled
from playground.engine.events import RunResult
from playground.engine.passes import Passes
from playground.engine.sync import SyncWorker
from playground.worker.dynamo_code import depyf_dump
from tests.processes import is_live
from tests.requests import request_for

from .conftest import EAGER, run

GALLERY = Path(__file__).resolve().parents[2] / "snippets"


def _depyf_decompiles() -> bool:
    """Whether depyf decompiles anything on this Python: depyf 0.20 on Python 3.13 fails on
    every code object (ValueError: invalid literal for int() with base 10: 'L1'), so the Code
    pane there is the fallback's (test_the_code_pane_on_a_python_depyf_cannot_read)."""

    def probe(x):
        if x > 0:
            return x + 1
        return x

    depyf = pytest.importorskip("depyf", reason="depyf is not installed in this environment")
    try:
        depyf.decompile(probe)
    except Exception:  # noqa: BLE001 - whatever depyf raises is its failure
        return False
    return True


def _needs_depyf_decompiling() -> None:
    """Skip a test of depyf's own output where depyf cannot decompile on this Python."""
    if not _depyf_decompiles():
        pytest.skip(
            f"depyf cannot decompile on Python {sys.version_info[0]}.{sys.version_info[1]}: the fallback's tests"
        )


def test_off_by_default(worker):
    report = run(worker, str(GALLERY / "default.py"))
    assert report["dynamo_code"] is None


def test_resume_function_names_its_break_line(worker):
    _needs_depyf_decompiling()
    # default.py: print() on line 33 breaks the graph; torch resumes after it.
    report = run(worker, str(GALLERY / "default.py"), passes=Passes(dynamo_code=True))
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
    report = run(worker, str(GALLERY / "pure_function.py"), passes=Passes(dynamo_code=True))
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
    items = depyf_dump.parse_full_code(text)
    assert [(i["kind"], i["name"], i["resumes_at_line"]) for i in items] == [
        ("guard", "__guard_0_for_torch_dynamo_resume_in_f_at_7", 7),
        ("transformed", "__transformed_code_0_for_torch_dynamo_resume_in_f_at_7", 7),
        ("resume", "torch_dynamo_resume_in_f_at_7", 7),
        ("transformed", "__transformed_code_0_for_f", None),
    ]


def test_parser_keeps_a_frame_depyf_could_not_decompile():
    # depyf 0.20 on torch 2.13, a module's forward that breaks (SWAP): the pair is named without
    # the frame, in the frame's own section, and the body is a docstring.
    text = (
        "def guard_0(L, G, **___kwargs_ignored):\n"
        "    __guard_hit = True\n    return __guard_hit\n\n"
        "def __compiled_fn_1_abc(*args, **kwargs):\n    pass\n\n"
        "def transformed_code_0(self, x):\n    'Failed to decompile.'\n\n"
        "def forward(self, x):\n    return x\n\n"
        "def transformed_forward(self, x):\n    return forward(self, x)\n\n"
        "#============ end of forward ============#\n"
    )
    items = depyf_dump.parse_full_code(text)
    assert [(i["kind"], i["name"], i["function"]) for i in items] == [
        ("guard", "__guard_0_for_forward", "forward"),
        ("transformed", "__transformed_code_0_for_forward", "forward"),
    ]
    assert items[1]["source"].startswith(depyf_dump.UNDECOMPILED)


def test_a_module_forward_that_breaks_keeps_its_own_frame(worker):
    _needs_depyf_decompiling()
    report = run(worker, str(GALLERY / "forward_break.py"), passes=Passes(dynamo_code=True))
    assert report["error"] is None
    kinds = {(i["kind"], i["function"]) for i in report["dynamo_code"]}
    # the forward itself (decompiled or not, by depyf's version), then the resume after line 40
    assert {("transformed", "forward"), ("guard", "forward")} <= kinds, kinds
    assert ("resume", "torch_dynamo_resume_in_forward_at_40") in kinds


# --- the run is the run; the code comes from a second child --------------------------------------

#: The head torch's log formatter puts on each line (time and pid), and the times in the text
#: ("Guard eval latency = 89.34 us"): they differ from run to run.
_LOG_HEAD = re.compile(r"^[VIWEDC]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ ", re.M)
_LOG_FLOAT = re.compile(r"\d+\.\d+")


def _comparable(value: Any, key: str = "") -> Any:
    """A report with what differs between two identical runs wiped: every float (a time), the
    worker's pid and memory, and the times and pid in torch's log lines."""
    if isinstance(value, dict):
        return {k: _comparable(v, k) for k, v in value.items() if k not in ("worker", "wall_s")}
    if isinstance(value, list):
        return [_comparable(v) for v in value]
    if isinstance(value, float):
        return 0.0
    if isinstance(value, str) and key in ("guards", "graph_breaks", "recompiles"):
        return _LOG_FLOAT.sub("0.0", _LOG_HEAD.sub("", value))
    return value


def test_a_run_with_the_code_reports_as_one_without(worker):
    _needs_depyf_decompiling()
    path = str(GALLERY / "default.py")
    plain = run(worker, path)
    with_code = run(worker, path, passes=Passes(dynamo_code=True))
    assert (plain["dynamo_code"], plain["dynamo_code_note"]) == (None, "")
    assert (
        with_code["dynamo_code_note"].startswith("decompiled by depyf")
        and "second run" in with_code["dynamo_code_note"]
    )
    assert any(i["kind"] == "resume" and i["resumes_at_line"] == 33 for i in with_code["dynamo_code"])
    with_code.update(dynamo_code=None, dynamo_code_note="")
    assert list(with_code) == list(plain)
    assert _comparable(with_code) == _comparable(plain)


def test_the_run_child_never_imports_depyf(worker, snippet):
    pytest.importorskip("depyf", reason="depyf is not installed in this environment")
    # The snippet prints whether depyf is loaded in its process: the run's output says no; the
    # code child's output is thrown away.
    path = snippet(
        """
        import sys
        import torch

        def fn(x):
            return torch.sin(x) + 1

        def inputs():
            print("depyf loaded:", "depyf" in sys.modules)
            yield (torch.ones(4),)
        """
    )
    report = run(worker, path, passes=Passes(dynamo_code=True))
    assert report["error"] is None and report["output"]["text"].strip() == "depyf loaded: False"
    assert report["dynamo_code"] and report["dynamo_code_note"].startswith("decompiled by depyf")


#: A snippet that behaves only when depyf is loaded in its process (the code child), as {how}.
_UNDER_DEPYF = """
import os
import sys
import time
import torch

def fn(x):
    return torch.cos(x) * 2

def inputs():
    if "depyf" in sys.modules:
        with open(os.path.join(os.path.dirname(__file__), "code_child.pid"), "w") as fh:
            fh.write(str(os.getpid()))
        {how}
    yield (torch.ones(4),)
"""


@pytest.mark.parametrize(
    ("how", "note"),
    [
        (
            "os._exit(3)",
            "depyf failed: its run of the snippet (a second process, after the report's run) exited with code 3",
        ),
        ("raise RuntimeError('not under depyf')", "that run stopped early: inputs() raised while producing call 1"),
    ],
)
def test_a_failing_code_run_keeps_the_run(worker, snippet, how, note):
    pytest.importorskip("depyf", reason="depyf is not installed in this environment")
    path = snippet(_UNDER_DEPYF.replace("{how}", how))
    plain = run(worker, path)
    report = run(worker, path, passes=Passes(dynamo_code=True))
    assert Path(path).with_name("code_child.pid").exists()  # the code child did run
    assert report["error"] is None and report["graph_count"] == plain["graph_count"] == 1
    assert report["dynamo_code"] == [] and note in report["dynamo_code_note"]
    assert _comparable({**report, "dynamo_code": None, "dynamo_code_note": ""}) == _comparable(plain)


def test_a_hung_code_run_times_out_and_keeps_the_run(worker, snippet):
    pytest.importorskip("depyf", reason="depyf is not installed in this environment")
    path = snippet(_UNDER_DEPYF.replace("{how}", "time.sleep(600)"))
    report = run(worker, path, passes=Passes(dynamo_code=True), timeout_s=12)
    assert report["error"] is None and report["graph_count"] == 1
    assert report["dynamo_code"] == []
    assert report["dynamo_code_note"] == (
        "depyf failed: its run of the snippet (a second process, after the report's run) timed out after 12 s "
        "and was killed"
    )
    assert not is_live(int(Path(path).with_name("code_child.pid").read_text()))


def _in_background(worker: SyncWorker, path: str) -> Future[RunResult]:
    pool = ThreadPoolExecutor(max_workers=1)
    future = pool.submit(worker.run, request_for(path, EAGER, timing=False, passes=Passes(dynamo_code=True)))
    pool.shutdown(wait=False)
    return future


def _wait_for(condition: Any, seconds: float = 60.0) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_cancel_during_the_code_run_kills_its_child(snippet):
    pytest.importorskip("depyf", reason="depyf is not installed in this environment")
    path = snippet(_UNDER_DEPYF.replace("{how}", "time.sleep(600)"))
    marker = Path(path).with_name("code_child.pid")
    with SyncWorker(timeout_s=120) as w:
        w.start()
        template = w.client.hello.pid
        future = _in_background(w, path)
        # The child opens the file, then writes its pid: wait for the pid, not for the file.
        assert _wait_for(lambda: marker.exists() and marker.read_text().strip()), "the code child never started"
        child = int(marker.read_text())
        assert is_live(child)
        w.cancel()
        with pytest.raises(RunCancelled):
            future.result(30)
        assert _wait_for(lambda: not is_live(child)), "the code child outlived the cancel"
        # The template stayed, and serves the next run (with its code) as before.
        again = w.run(
            request_for(str(GALLERY / "pure_function.py"), EAGER, timing=False, passes=Passes(dynamo_code=True))
        ).report
        assert again.error is None and again.dynamo_code and w.client.hello.pid == template


# --- where depyf cannot decompile: torch's own bytecode ------------------------------------------


#: A data-dependent branch: Dynamo's code for `fn` swaps the stack (SWAP), which depyf 0.20 does
#: not decompile on Python 3.12 and 3.13 (thuml/depyf#90, #86).
BRANCH = """\
import torch


def fn(x):
    y = torch.sin(x)
    if y.sum() > 0:
        return y * 2
    return y - 1


def inputs():
    return [(torch.ones(8),)]
"""


def test_code_depyf_cannot_decompile_is_shown_as_torchs_bytecode(worker, tmp_path):
    """Every transformed code is depyf's Python or, where depyf could not decompile it, the code
    torch wrote, from its own bytecode hook, listed by dis; the note says so, warned. Never
    depyf's bare 'Failed to decompile.'."""
    pytest.importorskip("depyf", reason="depyf is not installed in this environment")
    from playground.worker import compat
    from playground.worker.dynamo_code import bytecode

    path = tmp_path / "branch.py"
    path.write_text(BRANCH)
    report = run(worker, str(path), passes=Passes(dynamo_code=True))
    assert report["error"] is None
    transformed = [i for i in report["dynamo_code"] if i["kind"] == "transformed"]
    assert "fn" in {i["function"] for i in transformed}
    listed = [i for i in transformed if i["source"].startswith(bytecode.BYTECODE.split("(")[0])]
    for item in transformed:
        assert item in listed or "Failed to decompile" not in item["source"], item
    for item in listed:
        # dis's own columns: an offset and an opcode torch wrote, the call of the resume function
        assert re.search(r"^\s+\d+\s+[A-Z_]+", item["source"], re.M), item["source"][:500]
        assert "__resume_at_" in item["source"]
    if listed:
        assert "failed to decompile" in report["dynamo_code_note"]
    version = tuple(int(p) for p in (compat.depyf_version() or "0").split(".")[:2])
    if sys.version_info >= (3, 12) and version <= (0, 20):
        assert listed, "depyf 0.20 decompiled fn on this Python: the fallback was not exercised"


def test_a_frame_depyf_left_undecompiled_gets_its_bytecode():
    from playground.worker.dynamo_code import bytecode

    def fn(x):
        return print(x)

    items = [
        {"name": "__transformed_code_0_for_fn", "kind": "transformed", "function": "fn", "entry": 0},
        {"name": "__guard_0_for_fn", "kind": "guard", "function": "fn", "entry": 0, "source": "def g(): ...\n"},
    ]
    items[0]["source"] = depyf_dump.UNDECOMPILED + "    return 'Failed to decompile.'\n"
    out, shown = bytecode.filled(items, [("fn", fn.__code__)])
    assert shown == 1 and out[1] == items[1]
    assert out[0]["source"].startswith("# the transformed bytecode as torch wrote it")
    assert "LOAD_GLOBAL" in out[0]["source"] and "print" in out[0]["source"]
    (only,) = bytecode.items_of([("fn", fn.__code__)])
    assert (only["kind"], only["function"], only["entry"]) == ("transformed", "fn", 0)


def test_the_code_pane_on_a_python_depyf_cannot_read(worker):
    """Where depyf decompiles nothing (Python 3.13 with depyf 0.20), every transformed code
    object, the resume function's too, is torch's own bytecode listed by dis, and the note says
    why and on which Python: the pane is useful, never an error."""
    if _depyf_decompiles():
        pytest.skip("depyf decompiles on this Python: test_resume_function_names_its_break_line")
    from playground.worker.dynamo_code import bytecode

    report = run(worker, str(GALLERY / "default.py"), passes=Passes(dynamo_code=True))
    assert report["error"] is None
    items = report["dynamo_code"]
    functions = {i["function"] for i in items if i["kind"] == "transformed"}
    assert {"fn", "torch_dynamo_resume_in_fn_at_33"} <= functions, functions
    for item in items:
        assert item["source"].startswith(bytecode.BYTECODE.split("(")[0]), item["source"][:300]
        assert re.search(r"^\s+\d+\s+[A-Z_]+", item["source"], re.M), item["source"][:300]
    note = report["dynamo_code_note"]
    version = f"Python {sys.version_info[0]}.{sys.version_info[1]}"
    assert note.startswith("depyf failed") and version in note and "listed by dis" in note, note
