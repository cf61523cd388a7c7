"""The gallery's programs (snippets/programs/: files that call torch.compile themselves, run as
`python FILE` runs them) prove their claims on the installed torch.

For each program, the playground's `check --json` is compared with what torch itself says of
the same program run as `python FILE` in a fresh process (tests/program_truth.py: a counting
backend per torch.compile call, torch's compile ids and its graph_breaks log records): per
compiled callable and in total, graphs, breaks, recompiles and calls. Each program's EXPECTED
says what a reader is promised; where torch versions differ, TORCH_DIFFERS says how, and the
truth decides. The bounds (--max-calls, --max-seconds), toggles over the program's own
arguments, and how a program ends (an exception, sys.exit, argparse's usage error) are checked
here too. The test process stays torch-free.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = sorted(p for p in (ROOT / "snippets" / "programs").glob("*.py") if not p.name.startswith("_"))
NEEDS = {"hf_generate.py": "transformers"}
TIMEOUT_S = 600
COUNTS = ("graph_count", "graph_break_count", "recompile_count")


def _literal(path: Path, name: str) -> Any:
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            return ast.literal_eval(node.value)
    return None


def _skip_missing(path: Path) -> None:
    needed = NEEDS.get(path.name)
    if needed and importlib.util.find_spec(needed) is None:
        pytest.skip(f"{path.name} needs {needed} (pip install compile-playground[models])")


def _check(path: Path, *flags: str, args: list[str] | tuple[str, ...] = ()) -> tuple[int, dict[str, Any], str]:
    cmd = [sys.executable, "-m", "playground", "check", str(path), "--json", "--no-timing", *flags]
    if args:
        cmd += ["--", *args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, cwd=ROOT)
    assert done.stdout.strip(), done.stderr[-3000:]
    return done.returncode, json.loads(done.stdout), done.stderr


def _truth(path: Path, args: list[str], backend: str | None = None) -> dict[str, Any]:
    cmd = [sys.executable, str(ROOT / "tests" / "program_truth.py")]
    if backend:
        cmd += ["--backend", backend]
    done = subprocess.run([*cmd, str(path), *args], capture_output=True, text=True, timeout=TIMEOUT_S, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _keyed(callables: list[dict[str, Any]], index_of: Any) -> dict[str, dict[str, Any]]:
    """Callables by name, or name#N (N: the order torch.compile made it) where names repeat."""
    names = [c["name"] for c in callables]
    return {c["name"] if names.count(c["name"]) == 1 else f"{c['name']}#{index_of(c)}": c for c in callables}


def _ours(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return _keyed(report["callables"], lambda c: c["index"])


def _theirs(truth: dict[str, Any]) -> dict[str, dict[str, Any]]:
    listed = truth["callables"]
    return _keyed(listed, lambda c: listed.index(c) + 1)


def _torch_minor(version: str) -> str:
    return ".".join(version.split("+")[0].split(".")[:2])


def _agree(report: dict[str, Any], truth: dict[str, Any]) -> None:
    ours, theirs = _ours(report), _theirs(truth)
    assert sorted(ours) == sorted(theirs)
    for key, section in ours.items():
        for field in (*COUNTS, "calls"):
            assert section[field] == theirs[key][field], (key, field, section, theirs[key])
    for field in COUNTS:
        assert report[field] == truth[field], (field, report[field], truth[field])


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_a_program_reports_what_torch_compiled_per_callable(path: Path) -> None:
    _skip_missing(path)
    expected = _literal(path, "EXPECTED") or {"args": []}
    args = expected.get("args", [])
    code, report, stderr = _check(path, args=args)
    assert code == 0, stderr
    assert report["kind"] == "program" and report["error"] is None
    assert report["program_exit"] == {"code": 0, "exception": None} and report["stopped"] is None
    truth = _truth(path, args)
    _agree(report, truth)
    for section in report["callables"]:
        assert section["line"] and section["file"] == str(path)
        source = path.read_text().splitlines()[section["line"] - 1]
        assert "compile" in source, (section["name"], section["line"], source)
    promised = dict(expected)
    differs = (_literal(path, "TORCH_DIFFERS") or {}).get(_torch_minor(report["torch_version"]), {})
    for key, value in differs.items():
        promised[key] = (
            {**promised[key], **{k: {**promised[key][k], **v} for k, v in value.items()}}
            if key == "callables"
            else value
        )
    for field in COUNTS:
        if field in promised:
            assert report[field] == promised[field], (field, report[field])
    ours = _ours(report)
    for key, numbers in promised.get("callables", {}).items():
        for field, value in numbers.items():
            assert ours[key][field] == value, (key, field, ours[key][field])


def test_a_callable_that_compiled_nothing_says_why() -> None:
    code, report, _ = _check(ROOT / "snippets" / "programs" / "module_compile.py")
    assert code == 0
    for section in report["callables"]:
        if section["calls"] and section["graph_count"] == 0:
            assert any("compiled nothing" in n and "skips" in n for n in section["notes"]), section["notes"]
            assert section["kind"] == "module.compile"


def test_a_toggled_backend_replaces_the_programs_own_and_says_so() -> None:
    path = ROOT / "snippets" / "programs" / "train_loop.py"
    code, report, _ = _check(path, "--backend", "eager", args=["--epochs", "1"])
    assert code == 0
    for section in report["callables"]:
        assert section["options"]["backend"] == "'aot_eager'"
        assert section["toggled"] == {"backend": "aot_eager → eager"}
        assert any("backend=aot_eager → eager (toggled)" in n for n in section["notes"])
    _agree(report, _truth(path, ["--epochs", "1"], backend="eager"))


def test_max_calls_stops_a_long_loop_with_a_report_of_what_ran() -> None:
    path = ROOT / "snippets" / "programs" / "train_loop.py"
    code, report, _ = _check(path, "--max-calls", "7", args=["--epochs", "1000"])
    assert code == 0 and report["error"] is None
    assert report["stopped"] == {"by": "max_calls", "at": 7}
    assert report["program_exit"]["code"] is None
    assert sum(c["calls"] for c in report["callables"]) == 7
    assert report["graph_count"] == 4  # both recompiled at the first short batch, the 3rd call of each


def _program(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


def test_max_seconds_stops_an_eager_stretch(tmp_path: Path) -> None:
    path = _program(
        tmp_path,
        "spin.py",
        """
        import time
        import torch

        f = torch.compile(lambda x: x + 1, backend="eager")
        f(torch.ones(2))
        while True:
            time.sleep(0.01)
        """,
    )
    started = time.monotonic()
    code, report, _ = _check(path, "--max-seconds", "1")
    assert time.monotonic() - started < 60
    assert code == 0 and report["stopped"]["by"] == "max_seconds"
    assert 1.0 <= report["stopped"]["at"] < 10
    assert report["callables"][0]["calls"] == 1 and report["callables"][0]["graph_count"] == 1


def test_a_program_that_raises_keeps_its_sections_and_names_its_line(tmp_path: Path) -> None:
    path = _program(
        tmp_path,
        "raises.py",
        """
        import torch

        @torch.compile(backend="eager")
        def f(x):
            return x.sin()

        f(torch.ones(3))
        raise ValueError("bad data")
        """,
    )
    code, report, stderr = _check(path)
    assert code == 2 and "bad data" in stderr
    assert report["error"]["kind"] == "snippet" and report["error"]["line"] == 9
    assert report["program_exit"] == {"code": 1, "exception": {"type": "ValueError", "message": "bad data", "line": 9}}
    assert report["callables"][0]["graph_count"] == 1


def test_a_fullgraph_refusal_inside_a_callable_is_torch_compiles_finding(tmp_path: Path) -> None:
    path = _program(
        tmp_path,
        "refused.py",
        """
        import torch

        @torch.compile(backend="eager", fullgraph=True)
        def f(x):
            print("no")
            return x + 1

        f(torch.ones(3))
        """,
    )
    code, report, _ = _check(path)
    assert code == 0, report["error"]
    assert report["error"]["kind"] == "compile"
    assert report["program_exit"]["code"] == 1


def test_sys_exit_and_argv(tmp_path: Path) -> None:
    path = _program(
        tmp_path,
        "argv.py",
        """
        import sys
        import torch

        g = torch.compile(torch.cos, backend="eager")
        g(torch.ones(1))
        print("argv", sys.argv[1:], __name__)
        sys.exit(int(sys.argv[1]))
        """,
    )
    code, report, _ = _check(path, args=["0", "--x"])
    assert code == 0 and report["program_exit"] == {"code": 0, "exception": None}
    assert "argv ['0', '--x'] __main__" in report["output"]["text"]
    code, report, stderr = _check(path, args=["3"])
    assert code == 2 and report["program_exit"]["code"] == 3
    assert report["error"]["type"] == "SystemExit" and report["error"]["line"] == 8, stderr


def test_program_mode_is_forced_or_found_and_a_snippet_stays_a_snippet(tmp_path: Path) -> None:
    _, report, _ = _check(ROOT / "snippets" / "default.py")
    assert report["kind"] == "snippet" and "callables" not in report
    path = _program(
        tmp_path,
        "both.py",
        """
        import torch

        def fn(x):
            return x * 2

        def inputs():
            return [torch.ones(2)]

        if __name__ == "__main__":
            torch.compile(fn, backend="eager")(torch.ones(2))
        """,
    )
    _, report, _ = _check(path)
    assert report["kind"] == "snippet"
    _, report, _ = _check(path, "--program")
    assert report["kind"] == "program" and report["callables"][0]["name"] == "fn"
    assert any("--program asks for it" in n for n in report["notes"])


@pytest.mark.parametrize("path", PROGRAMS, ids=lambda p: p.stem)
def test_a_program_runs_on_its_own(path: Path) -> None:
    _skip_missing(path)
    args = (_literal(path, "EXPECTED") or {}).get("args", [])
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, str(path), *args], capture_output=True, text=True, timeout=TIMEOUT_S, env=env
    )
    assert done.returncode == 0, done.stderr[-3000:]


# --- equivalence per callable, against the same program under force_eager -------------------


def test_each_callable_is_compared_with_the_program_run_eagerly_values_and_grads() -> None:
    path = ROOT / "snippets" / "programs" / "train_loop.py"
    code, report, _ = _check(path, args=["--epochs", "2"])
    assert code == 0, report["error"]
    sections = _ours(report)
    for name, section in sections.items():
        eq = section["equivalence"]
        assert eq["ok"] and eq["verdict"] == "identical", (name, eq)
        assert {o["call"] for o in eq["outputs"]} == set(range(1, section["calls"] + 1))
        assert "force_eager" in eq["reference"]
    # The module's parameters: one set of grads per backward() the program made (3 batches x 2).
    net = sections["Net"]["equivalence"]
    assert {g["name"] for g in net["grads"]} >= {"grad['fc1.weight']", "grad['fc2.bias']"}
    assert {g["call"] for g in net["grads"]} == set(range(1, 7))
    assert sections["loss_fn"]["equivalence"]["grads"] == []  # a function has no parameters
    assert report["equivalence"]["ok"] and report["equivalence"]["verdict"] == "identical"


def test_a_callable_whose_compiled_values_differ_is_the_one_that_fails(tmp_path: Path) -> None:
    # A backend that adds 1 to every output: what the program computes eagerly is the truth.
    path = _program(
        tmp_path,
        "wrong.py",
        """
        import torch

        def off_by_one(gm, example_inputs):
            def run(*args):
                return [o + 1 for o in gm(*args)]
            return run

        good = torch.compile(lambda x: x * 2, backend="eager")
        bad = torch.compile(lambda x: x * 3, backend=off_by_one)
        x = torch.ones(4)
        for _ in range(3):
            good(x)
            bad(x)
        """,
    )
    code, report, _ = _check(path)
    assert code == 0, report["error"]
    good, bad = report["callables"]
    assert good["equivalence"]["ok"] and good["equivalence"]["verdict"] == "identical"
    assert not bad["equivalence"]["ok"] and bad["equivalence"]["verdict"] == "differs"
    assert [o["max_abs"] for o in bad["equivalence"]["outputs"]] == [1.0, 1.0, 1.0]
    assert report["equivalence"]["ok"] is False
    assert all(o["name"].startswith("<lambda>#2: ") for o in report["equivalence"]["outputs"] if not o["ok"])


def test_runs_whose_calls_part_are_compared_up_to_where_they_part(tmp_path: Path) -> None:
    # The loop's length depends on the compiled values: compiled (x + 1 + 1 per step) stops
    # sooner than eager, so the two runs' calls part after the common prefix.
    path = _program(
        tmp_path,
        "loop.py",
        """
        import torch

        def plus_one(gm, example_inputs):
            return lambda *args: [o + 1 for o in gm(*args)]

        step = torch.compile(lambda x: x + 1, backend=plus_one)
        other = torch.compile(lambda x: x - 1, backend="eager")
        x = torch.zeros(1)
        while x.item() < 6:
            x = step(x)
        other(x)
        """,
    )
    code, report, _ = _check(path)
    assert code == 0, report["error"]
    assert any("parted at call 4" in n for n in report["notes"]), report["notes"]
    from playground.cli.textreport import render
    from playground.engine.report import Report

    assert render(Report.from_dict(report)).count("parted at call 4") == 1  # once, in the equivalence section
    step = report["callables"][0]["equivalence"]
    assert {o["call"] for o in step["outputs"]} == {1, 2, 3}
    assert report["callables"][1].get("equivalence") is None  # never reached in common


def test_callable_aims_the_toggles_at_one_callable(tmp_path: Path) -> None:
    path = ROOT / "snippets" / "programs" / "train_loop.py"
    code, report, _ = _check(path, "--backend", "eager", "--callable", "loss_fn", args=["--epochs", "1"])
    assert code == 0, report["error"]
    sections = _ours(report)
    assert sections["loss_fn"]["toggled"] == {"backend": "aot_eager → eager"}
    assert sections["Net"]["toggled"] == {}
    assert report["program"]["only"] == "loss_fn"
    code, report, _ = _check(path, "--backend", "eager", "--callable", "nothing_here", args=["--epochs", "1"])
    assert code == 0
    assert any("no compiled callable is 'nothing_here'" in n for n in report["notes"]), report["notes"]
    assert all(c["toggled"] == {} for c in report["callables"])


def test_os_exit_ends_the_program_not_the_run(tmp_path: Path) -> None:
    path = _program(
        tmp_path,
        "osexit.py",
        """
        import os
        import torch

        f = torch.compile(lambda x: x + 1, backend="eager")
        f(torch.ones(2))
        os._exit(3)
        """,
    )
    code, report, stderr = _check(path)
    assert code == 2
    assert report["kind"] == "program" and report["program_exit"] == {"code": 3, "exception": None}, (
        report["error"],
        stderr[-3000:],
    )
    assert report["error"]["kind"] == "snippet" and report["error"]["line"] == 7
    assert report["callables"][0]["graph_count"] == 1


def test_a_program_without_bounds_stops_within_its_timeout_with_a_report(tmp_path: Path) -> None:
    path = _program(
        tmp_path,
        "forever.py",
        """
        import torch

        f = torch.compile(lambda x: x + 1, backend="eager")
        while True:
            f(torch.ones(2))
        """,
    )
    code, report, _ = _check(path, "--timeout", "9")
    assert code == 0 and report["error"] is None
    assert report["stopped"]["by"] == "max_seconds" and 3 <= report["stopped"]["at"] < 9
    assert any("a third of the run's timeout" in n for n in report["notes"]), report["notes"]
    assert report["callables"][0]["equivalence"]["ok"]


@pytest.mark.parametrize("when", ["after_a_call", "before_any_call"])
def test_a_program_whose_process_dies_keeps_what_it_streamed(tmp_path: Path, when: str) -> None:
    """SIGKILL ends the process without a word (the program's own kill, or the OOM killer's):
    the report is still the program's, with the sections it had when it died."""
    call = "f(torch.ones(2))\n" if when == "after_a_call" else ""
    path = tmp_path / "dies.py"
    path.write_text(
        "import os, signal\nimport torch\n\n"
        'f = torch.compile(lambda x: x - 1, backend="eager")\n'
        f"{call}os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    code, report, _ = _check(path)
    assert code == 2 and report["error"]["type"] == "WorkerDied" and "SIGKILL" in report["error"]["message"]
    assert report["kind"] == "program"
    if call:
        (section,) = report["callables"]
        assert section["calls"] == 1 and section["graph_count"] == 1
    else:
        assert report["callables"] == [] or all(c["calls"] == 0 for c in report["callables"])


def test_a_program_killed_soon_after_a_recompile_keeps_it(tmp_path: Path) -> None:
    """Calls come faster than the live reports' interval: the recompile torch logged is sent at
    once, so the process's death does not take it along."""
    path = tmp_path / "dies.py"
    path.write_text(
        "import os, signal\nimport torch\n\n"
        'f = torch.compile(lambda x: x * 2, backend="eager")\n'
        "for n in range(4):\n    f(torch.randn(n + 2))\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    code, report, _ = _check(path)
    assert code == 2 and report["error"]["type"] == "WorkerDied"
    (section,) = report["callables"]
    assert section["graph_count"] == 2 and section["recompile_count"] == 1
    assert report["recompile_count"] == 1
