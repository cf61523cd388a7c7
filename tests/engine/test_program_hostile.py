"""Programs that do what a snippet never does: take odd arguments, read stdin, start processes.
Each ends with one clear answer, blamed on the program where it is the program's, with nothing
left running. The truth is the same file run as `python FILE ARGS`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _check(path: Path, *args: str) -> tuple[int, dict, str]:
    cmd = [sys.executable, "-m", "playground", "check", str(path), "--json", "--no-timing"]
    if args:
        cmd += ["--", *args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, cwd=ROOT, stdin=subprocess.DEVNULL)
    assert done.stdout.strip(), done.stderr[-3000:]
    return done.returncode, json.loads(done.stdout), done.stderr


def _write(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


def test_odd_arguments_reach_the_program_as_python_gives_them(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "argv.py",
        """
        import sys
        import torch

        torch.compile(lambda x: x * 2, backend="eager")(torch.ones(2))
        print(ascii(sys.argv[1:]))
        """,
    )
    args = ["", "--help", "-x", "héllo ✓ 日本", "--", "A" * 3000]
    python = subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True, timeout=600)
    assert python.returncode == 0, python.stderr[-2000:]
    code, report, stderr = _check(path, *args)
    assert code == 0, stderr
    assert report["kind"] == "program" and report["error"] is None
    assert report["output"]["text"] == python.stdout
    assert report["callables"][0]["calls"] == 1


def test_a_program_reading_stdin_sees_it_empty_and_is_told_why(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "asks.py",
        """
        import torch

        torch.compile(lambda x: x * 2, backend="eager")(torch.ones(2))
        name = input("name? ")
        """,
    )
    python = subprocess.run(
        [sys.executable, str(path)], capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL
    )
    assert python.returncode == 1 and "EOFError" in python.stderr
    code, report, _ = _check(path)
    assert code == 2
    error = report["error"]
    assert error["kind"] == "snippet" and error["type"] == "EOFError" and error["line"] == 5
    assert "stdin is empty" in error["message"]
    exception = report["program_exit"]["exception"]
    assert exception["type"] == "EOFError" and "stdin" not in exception["message"]  # Python's own words


def test_a_process_the_program_starts_is_gone_when_the_run_is(tmp_path: Path) -> None:
    marker = f"compile-playground-test-sleeper-{os.getpid()}"
    path = _write(
        tmp_path,
        "spawns.py",
        f"""
        import subprocess
        import torch

        torch.compile(lambda x: x * 2, backend="eager")(torch.ones(2))
        subprocess.Popen(["bash", "-c", "exec -a {marker} sleep 300"])
        print("spawned")
        """,
    )
    code, report, stderr = _check(path)
    assert code == 0 and report["error"] is None, stderr
    assert "spawned" in report["output"]["text"]
    left = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
    assert left.stdout.strip() == "", f"left running: {left.stdout}"


def test_a_programs_own_exception_is_said_as_the_programs_error(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "raises.py",
        """
        import torch

        f = torch.compile(lambda x: x * 2, backend="eager")
        f(torch.ones(2))
        raise ValueError("the data is bad")
        """,
    )
    code, report, stderr = _check(path)
    assert code == 2 and report["kind"] == "program"
    assert report["error"]["kind"] == "snippet"  # on the wire: the user's code, as the contract says
    assert stderr.strip().splitlines()[-1].startswith("compile-playground: program error (line 6): ValueError"), stderr


def test_a_call_the_program_caught_and_a_branch_on_is_compiling_are_said(tmp_path: Path) -> None:
    # The set_stance tutorial's patterns: a function that returns another value while compiled
    # (is_compiling), and a call that fail_on_recompile made raise, caught by the program.
    path = _write(
        tmp_path,
        "stance.py",
        """
        import torch

        @torch.compile(backend="eager")
        def f(x):
            if torch.compiler.is_compiling():
                return x + 1
            return x - 1

        @torch.compile(backend="eager")
        def g(x, n):
            return x * n

        for _ in range(3):
            f(torch.ones(2))
        g(torch.ones(2), 1)
        torch.compiler.set_stance("fail_on_recompile")
        try:
            g(torch.ones(2), 2)
        except RuntimeError as exc:
            print("caught", type(exc).__name__)
        """,
    )
    python = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=600)
    assert python.returncode == 0 and python.stdout == "caught RuntimeError\n", python.stderr[-2000:]
    code, report, _ = _check(path)
    assert report["output"]["text"] == python.stdout
    f, g = report["callables"]
    assert any("is_compiling()" in n for n in f["notes"]) and not f["equivalence"]["ok"]
    assert not any("is_compiling()" in n for n in g["notes"])
    (raised,) = [n for n in g["notes"] if "raised" in n]
    assert raised.startswith("its call 2 raised RuntimeError: Detected recompile"), raised
    assert {o["call"] for o in g["equivalence"]["outputs"]} == {1}


def test_a_callable_that_returns_none_says_its_effects_were_not_compared(tmp_path: Path) -> None:
    # The compiling-optimizer recipe: a compiled `fn()` that steps an optimizer and returns None.
    path = _write(
        tmp_path,
        "opt.py",
        """
        import torch

        model = torch.nn.Linear(2, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        model(torch.ones(2)).sum().backward()

        @torch.compile(backend="eager")
        def step():
            opt.step()

        for _ in range(2):
            step()
        """,
    )
    code, report, _ = _check(path)
    assert code == 0, report["error"]
    (section,) = report["callables"]
    assert {o["dtype"] for o in section["equivalence"]["outputs"]} == {"NoneType"}
    assert "each returned None" in section["equivalence"]["note"], section["equivalence"]["note"]
