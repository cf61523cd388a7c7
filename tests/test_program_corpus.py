"""Programs of our own writing (tests/programs/), each one pattern real scripts use (regional
compilation in a loop, stance calls, threads, torch._dynamo.optimize beside torch.compile, a
top-level script, compiled autograd, a training loop, a guard-heavy loop, a reset, nested
callables), run by the playground as `python FILE` runs them: the graphs, recompiles and
graph breaks it reports are the ones torch logs for the same program run by plain python
(tests/plain_truth.py: torch's own counters and TORCH_LOGS records, nothing of ours in the
process). The playground must observe a program, never change what torch does with it.

The test process stays torch-free; each side runs in a fresh process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = sorted(p for p in (ROOT / "tests" / "programs").glob("*.py") if not p.name.startswith("_"))
COUNTS = ("graph_count", "recompile_count", "graph_break_count")
TIMEOUT_S = 600


def check(path: Path, *flags: str) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "playground", "check", str(path), "--json", "--no-timing", *flags]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, cwd=ROOT)
    assert done.stdout.strip(), done.stderr[-3000:]
    return json.loads(done.stdout)


def plain(path: Path) -> dict[str, Any]:
    cmd = [sys.executable, str(ROOT / "tests" / "plain_truth.py"), str(path)]
    # TORCH_LOGS set, torch ignores a program's own set_logs calls (tests/programs/own_logs.py's
    # would otherwise turn off the records the truth counts); it changes what is logged, never
    # what is compiled.
    env = {**os.environ, "TORCH_LOGS": "graph_breaks,recompiles"}
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, cwd=ROOT, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_corpus_holds_at_least_ten_programs() -> None:
    assert len(CORPUS) >= 10, [p.name for p in CORPUS]


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_a_program_compiles_under_the_playground_what_it_compiles_under_python(path: Path) -> None:
    truth = plain(path)
    assert truth["exit"] == 0 and truth["exception"] is None, truth
    report = check(path)
    assert report["kind"] == "program", report["notes"]
    assert report["error"] is None, report["error"]
    assert report["program_exit"]["code"] == 0 and report["stopped"] is None
    for field in COUNTS:
        assert report[field] == truth[field], (field, report[field], truth[field])
    # The totals are the callables' and what arrived outside every call (compiled autograd).
    assert sum(c["graph_count"] for c in report["callables"]) <= report["graph_count"]


def _program(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


def test_regional_compilation_makes_no_backend_recompile_and_says_who_compiled() -> None:
    report = check(ROOT / "tests" / "programs" / "regional_loop.py")
    blocks = report["callables"]
    assert len(blocks) == 12 and all(b["calls"] == 3 for b in blocks)
    assert not any("BACKEND_MATCH" in reason for b in blocks for r in b["recompiles"] for reason in r["reasons"])
    served = [b for b in blocks if b["graph_count"] == 0]
    assert served and all(any("under callable #1" in n for n in b["notes"]) for b in served), served[0]["notes"]


def test_threads_each_callable_gets_its_own_graphs() -> None:
    report = check(ROOT / "tests" / "programs" / "threads.py")
    by_name = {c["name"]: c for c in report["callables"]}
    assert by_name["in_thread"]["calls"] == 3 and by_name["in_thread"]["graph_count"] >= 1
    assert by_name["in_thread"]["graph_break_count"] == 0
    assert by_name["in_main"]["calls"] == 2 and by_name["in_main"]["graph_break_count"] >= 1


def test_optimize_is_a_callable_of_its_own() -> None:
    report = check(ROOT / "tests" / "programs" / "optimize_and_compile.py")
    kinds = {c["name"]: c["kind"] for c in report["callables"]}
    assert kinds == {"first": "optimize", "second": "function"}
    assert all(c["calls"] == 3 and c["graph_count"] >= 1 for c in report["callables"])


def test_the_reference_stays_eager_whatever_stance_the_program_sets(tmp_path: Path) -> None:
    # A backend that doubles every output: only an eager reference can see it differ.
    path = _program(
        tmp_path,
        "stance.py",
        """
        import torch

        def doubling(gm, example_inputs):
            def run(*args):
                out = gm(*args)
                return [o * 2 for o in out] if isinstance(out, (list, tuple)) else out * 2
            return run

        @torch.compile(backend=doubling)
        def f(x):
            return x + 1

        torch.compiler.set_stance("default")
        for _ in range(3):
            f(torch.ones(3))
        with torch.compiler.set_stance("default"):
            f(torch.ones(3))
        torch._dynamo.config.compiled_autograd = True
        torch._dynamo.optimize(doubling)(lambda x: x * 3)(torch.ones(2))
        """,
    )
    report = check(path)
    assert report["error"] is None
    sections = {c["name"]: c for c in report["callables"]}
    assert sections["f"]["equivalence"]["ok"] is False
    assert sections["f"]["equivalence"]["verdict"] == "differs"


def test_a_stop_the_program_swallows_is_still_a_stop(tmp_path: Path) -> None:
    path = _program(
        tmp_path,
        "swallow.py",
        """
        import torch

        f = torch.compile(lambda x: x + 1, backend="eager")
        seen = 0
        for _ in range(50):
            try:
                f(torch.ones(2))
            except:  # noqa: E722 - what a careless program does
                seen += 1
        print("caught", seen)
        """,
    )
    report = check(path, "--max-calls", "5")
    assert report["stopped"]["by"] == "max_calls"
    assert report["calls"] == 5
    assert any("caught the playground's stop" in n for n in report["notes"])


def _torch_logged_breaks(path: Path) -> int:
    """Graph breaks torch logs for `python PROG` (TORCH_LOGS=graph_breaks), however it ends."""
    env = {**os.environ, "TORCH_LOGS": "graph_breaks"}
    done = subprocess.run(
        [sys.executable, str(path)], capture_output=True, text=True, timeout=TIMEOUT_S, cwd=ROOT, env=env
    )
    return done.stderr.count("Graph break in user code")


def test_os_exit_is_the_programs_and_no_break_of_ours(tmp_path: Path) -> None:
    path = _program(
        tmp_path,
        "exits.py",
        """
        import atexit
        import os
        import torch

        atexit.register(lambda: print("never: os._exit skips exit functions"))

        @torch.compile(backend="eager")
        def f(x):
            y = x + 1
            if x.sum() > 100:
                os._exit(3)
            return y

        f(torch.ones(2))
        f(torch.full((2,), 100.0))
        """,
    )
    report = check(path)
    assert report["program_exit"]["code"] == 3
    assert report["graph_break_count"] == _torch_logged_breaks(path)
    assert not any("posix" in b["reason"] or "program_compiles" in (b["file"] or "") for b in report["graph_breaks"])
    assert "never" not in report["output"]["text"]


def test_the_programs_exit_functions_run_and_are_shown(tmp_path: Path) -> None:
    path = _program(
        tmp_path,
        "bye.py",
        """
        import atexit
        import torch

        @atexit.register
        def bye():
            print("exit function ran")

        torch.compile(lambda x: x * 2, backend="eager")(torch.ones(2))
        print("main done")
        """,
    )
    report = check(path)
    out = report["output"]["text"]
    assert "main done" in out and "exit function ran" in out
    assert out.index("main done") < out.index("exit function ran")


def test_torchs_error_inside_a_callable_is_given_as_torch_gave_it(tmp_path: Path) -> None:
    path = _program(
        tmp_path,
        "strict.py",
        """
        import torch

        @torch.compile(backend="eager")
        def f(x):
            return x * 2

        f(torch.ones(2))
        torch.compiler.set_stance("fail_on_recompile")
        f(torch.ones(3))
        """,
    )
    truth = plain(path)
    report = check(path)
    error = report["error"]
    assert error["type"] == truth["exception"]["type"]
    assert truth["exception"]["message"] in error["message"]
    assert error["line"] == 10
    (section,) = report["callables"]
    assert not any("traced no tensor operation" in n for n in section["notes"])


def test_trace_writes_what_torch_trace_writes(tmp_path: Path) -> None:

    path = ROOT / "tests" / "programs" / "decorated_breaks.py"
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    cmd = [sys.executable, "-m", "playground", "check", str(path), "--no-timing", "--trace", str(ours)]
    subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, cwd=ROOT)
    env = {**os.environ, "TORCH_TRACE": str(theirs)}
    subprocess.run([sys.executable, str(path)], capture_output=True, timeout=TIMEOUT_S, cwd=ROOT, env=env)

    def events(folder: Path) -> dict[str, int]:
        text = "".join(p.read_text() for p in folder.iterdir())
        return {e: text.count(f'"{e}"') for e in ("dynamo_start", "dynamo_output_graph", "compilation_metrics")}

    mine = events(ours)
    assert mine == events(theirs) and mine["dynamo_output_graph"] > 0, mine
    # Each compile's stack as python logs it: the program's frames, none of ours.
    assert _starts(ours) == _starts(theirs)
    # tlparse reads ours as it reads torch's: the same compiles, each with the same artifacts.
    tlparse = Path(sys.executable).with_name("tlparse")
    if not tlparse.exists():
        pytest.skip("tlparse is not installed")
    pages = {}
    for side in (ours, theirs):
        (log,) = side.iterdir()
        out = tmp_path / f"tlparse-{side.name}"
        subprocess.run([str(tlparse), str(log), "-o", str(out), "--no-browser"], check=True, capture_output=True)
        pages[side.name] = {
            d.name: sorted(f.name.rsplit("_", 1)[0] for f in d.iterdir()) for d in out.iterdir() if d.is_dir()
        }
    assert pages["ours"] == pages["theirs"] and len(pages["ours"]) > 1, pages


def _starts(folder: Path) -> list[list[tuple[str, str, int]]]:
    """Each dynamo_start's stack in a TORCH_TRACE folder: (file, function, line) per frame."""
    names: dict[int, str] = {}
    starts = []
    for line in "".join(p.read_text() for p in folder.iterdir()).splitlines():
        if "] {" not in line:
            continue
        record = json.loads(line.split("] ", 1)[1])
        if "str" in record:
            names[record["str"][1]] = record["str"][0]
        elif "dynamo_start" in record:
            stack = record["dynamo_start"]["stack"]
            starts.append([(names.get(f["filename"], "?"), f["name"], f["line"]) for f in stack])
    return starts


def test_a_break_in_a_helper_module_is_shown_at_its_own_file_and_line(tmp_path: Path) -> None:
    _program(
        tmp_path,
        "helper_mod.py",
        """
        def g(x):
            y = x * 2
            print("a break in a helper module")
            return y
        """,
    )
    path = _program(
        tmp_path,
        "uses_helper.py",
        """
        import torch
        import helper_mod

        @torch.compile(backend="eager")
        def f(x):
            return helper_mod.g(x) + 1

        f(torch.ones(3))
        """,
    )
    env = {**os.environ, "TORCH_LOGS": "graph_breaks"}
    done = subprocess.run(
        [sys.executable, str(path)], capture_output=True, text=True, timeout=TIMEOUT_S, cwd=tmp_path, env=env
    )
    logged = {
        tuple(line.split("Graph break in user code at ")[1].rsplit(":", 1))
        for line in done.stderr.splitlines()
        if "Graph break in user code at " in line
    }
    report = check(path)
    assert {(b["file"], str(b["line"])) for b in report["graph_breaks"]} == logged
    assert str(tmp_path / "helper_mod.py") in report["local_modules"]
