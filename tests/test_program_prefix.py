"""A program's values are compared with its eager reference over a prefix: the first calls of
each compiled callable (`--compare-calls N`, else the worker's default). The reference runs the
program only as far as those calls reach, a callable first called late included, and past its
budget a call of the compiled run copies nothing. Truth from the program itself: what it wrote
to a file and what a plain `python FILE` run of it writes. The reference's writes to a user's
file go to shadows of its own (tests/test_program_files.py), so the file the reference must
reach too is in /dev/shm, the kernel's shared memory, which it writes as the program says.

A program that calls torch._dynamo.reset() compiles 0/0 again: each compile's first run is
its own (`first_run_s`), keyed by which compile of the id it is.

The test process stays torch-free; each side runs in a fresh process.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any
from uuid import uuid4

import pytest

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT_S = 600
#: What a graph of the resetting program sleeps at its first run.
SLEEP_S = 0.2

#: A loop of many calls of one compiled callable, each iteration a line in the file argv[1]
#: names; what it returns is an object that writes a line there at each pickling (a copy of it).
LOOP = """
import sys
import torch

LOG = open(sys.argv[1], "a")


class Counted:
    def __init__(self, value):
        self.value = value

    def __reduce__(self):
        LOG.write("copied\\n")
        LOG.flush()
        return (Counted, (self.value,))


@torch.compile(backend="eager")
def step(x):
    return Counted(x + 1)


x = torch.zeros(3)
for _ in range(CALLS):
    x = step(x).value
    LOG.write("iteration\\n")
    LOG.flush()
"""


@pytest.fixture
def shared() -> Any:
    """A folder in /dev/shm, where the reference's writes land as the compiled run's do."""
    folder = Path("/dev/shm") / f"playground-test-{uuid4().hex}"
    folder.mkdir()
    yield folder
    for path in folder.iterdir():
        path.unlink()
    folder.rmdir()


def _program(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body))
    return path


def check(path: Path, *flags: str, args: tuple[str, ...] = ()) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "playground", "check", str(path), "--json", "--no-timing", *flags]
    if args:
        cmd += ["--", *args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, cwd=ROOT)
    assert done.stdout.strip(), done.stderr[-3000:]
    return json.loads(done.stdout)


def plain(path: Path, *args: str) -> None:
    done = subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True, timeout=TIMEOUT_S)
    assert done.returncode == 0, done.stderr[-3000:]


def _lines(path: Path, word: str) -> int:
    return path.read_text().splitlines().count(word) if path.exists() else 0


def _compared(section: dict[str, Any]) -> int:
    match = re.match(r"(\d+) calls? compared", section["equivalence"]["note"])
    assert match, section["equivalence"]["note"]
    return int(match.group(1))


def _loop(tmp_path: Path, calls: int) -> Path:
    return _program(tmp_path, "loop.py", LOOP.replace("CALLS", str(calls)))


def test_the_reference_runs_only_as_far_as_the_compared_calls_reach(tmp_path: Path, shared: Path) -> None:
    program = _loop(tmp_path, 300)
    alone, ours = tmp_path / "plain.log", shared / "ours.log"
    plain(program, str(alone))
    report = check(program, "--compare-calls", "7", args=(str(ours),))
    assert report["error"] is None, report["error"]
    (section,) = report["callables"]
    assert section["calls"] == 300
    assert _compared(section) == 7
    assert "293 later calls not compared" in section["equivalence"]["note"]
    # The run's own verdict says it covers only the compared calls, as the section's does.
    assert "293 later calls of compiled callables not compared" in report["equivalence"]["note"]
    # The compiled run made every iteration, as python does; the reference only the compared ones
    # (it stops at the compiled call after the 7th: the 8th iteration never writes its line).
    reference = _lines(ours, "iteration") - _lines(alone, "iteration")
    assert _lines(alone, "iteration") == 300
    assert reference == 7, reference


def test_past_its_budget_a_call_copies_nothing(tmp_path: Path, shared: Path) -> None:
    program = _loop(tmp_path, 300)
    alone, ours = tmp_path / "plain.log", shared / "ours.log"
    plain(program, str(alone))
    report = check(program, "--compare-calls", "5", args=(str(ours),))
    assert report["error"] is None, report["error"]
    (section,) = report["callables"]
    assert _compared(section) == 5
    # What a compared call returned is copied (the compiled run's snapshot; the reference's, and
    # its pickle to the compiled run), a call past the budget never; python copies nothing.
    assert _lines(alone, "copied") == 0
    assert 5 <= _lines(ours, "copied") <= 3 * 5, _lines(ours, "copied")


def test_a_callable_first_called_after_the_others_budgets_is_compared(tmp_path: Path, shared: Path) -> None:
    # A backend that doubles every output: only a comparison with eager sees `late` differ.
    program = _program(
        tmp_path,
        "late.py",
        """
        import sys
        import torch

        LOG = open(sys.argv[1], "a")

        def doubling(gm, example_inputs):
            def run(*args):
                out = gm(*args)
                return [o * 2 for o in out] if isinstance(out, (list, tuple)) else out * 2
            return run

        @torch.compile(backend="eager")
        def early(x):
            return x + 1

        @torch.compile(backend=doubling)
        def late(x):
            return x * 3

        x = torch.zeros(3)
        for _ in range(150):
            x = early(x)
        print(late(x).sum().item(), late(x + 1).sum().item())
        LOG.write("end\\n")
        LOG.flush()
        """,
    )
    alone, ours = tmp_path / "plain.log", shared / "ours.log"
    plain(program, str(alone))
    report = check(program, args=(str(ours),))
    assert report["error"] is None, report["error"]
    sections = {c["name"]: c for c in report["callables"]}
    assert sections["early"]["calls"] == 150 and sections["late"]["calls"] == 2
    assert sections["early"]["equivalence"]["ok"] is True
    assert f"{150 - _compared(sections['early'])} later calls not compared" in sections["early"]["equivalence"]["note"]
    assert _compared(sections["late"]) == 2
    assert sections["late"]["equivalence"]["ok"] is False
    assert sections["late"]["equivalence"]["verdict"] == "differs"
    # The reference reached late's calls and, past them, ran the program to its end.
    assert _lines(ours, "end") == 2 * _lines(alone, "end") == 2


def test_a_program_that_resets_gets_each_compiles_own_first_run(tmp_path: Path) -> None:
    # Each compile's graph sleeps at its first run only; after the reset the next compile is 0/0
    # again, and its first run is its own, never added to the first 0/0's.
    program = _program(
        tmp_path,
        "resets.py",
        """
        import time
        import torch

        def slow_first(gm, example_inputs):
            pending = [True]
            def run(*args):
                if pending[0]:
                    pending[0] = False
                    time.sleep(SLEEP)
                return gm(*args)
            return run

        f = torch.compile(lambda x: x + 1, backend=slow_first)
        f(torch.ones(2))
        torch._dynamo.reset()
        f(torch.ones(2))
        torch._dynamo.reset()
        f(torch.ones(2))
        """.replace("SLEEP", str(SLEEP_S)),
    )
    report = check(program)
    assert report["error"] is None, report["error"]
    rows = [r for r in report["compile_phases"] if r["pass"] == "forward"]
    assert [r["compile_id"] for r in rows] == ["0/0"] * 3 == ["0/0"] * report["graph_count"]
    for row in rows:
        assert SLEEP_S <= row["first_run_s"] < 2 * SLEEP_S, rows


#: A loop of slow steps (0.2 s each outside the compiled call, as a data loader's or a
#: logger's), each iteration a line in the file argv[1] names.
SLOW_STEPS = """
import sys
import time
import torch

LOG = open(sys.argv[1], "a")


@torch.compile(backend="eager")
def step(x):
    return x + 1


x = torch.zeros(3)
for _ in range(25):
    x = step(x)
    time.sleep(0.2)
    LOG.write("iteration\\n")
    LOG.flush()
"""


def test_without_compare_calls_the_prefix_is_held_to_about_half_a_second_of_steps(tmp_path: Path, shared: Path) -> None:
    # The reference runs the program again as far as the compared calls reach: 20 steps of a
    # slow loop would add 4 s to a 5 s program. Without --compare-calls the prefix is cut to
    # what fits in COMPARE_BUDGET_S of the program's steps, never below 3 calls, and says so.
    program = _program(tmp_path, "slow.py", SLOW_STEPS)
    alone, ours = tmp_path / "plain.log", shared / "ours.log"
    plain(program, str(alone))
    report = check(program, args=(str(ours),))
    assert report["error"] is None, report["error"]
    (section,) = report["callables"]
    compared = _compared(section)
    assert compared == 3, section["equivalence"]["note"]  # 0.5 s / 0.2 s steps: the floor of 3
    assert "as many as fit in about 0.5 s of the program's steps" in section["equivalence"]["note"]
    assert f"{25 - compared} later calls of compiled callables not compared" in report["equivalence"]["note"]
    assert _lines(ours, "iteration") - _lines(alone, "iteration") == compared
    # Asked for, the count is what the user said, whatever the steps cost.
    report = check(program, "--compare-calls", "6", args=(str(tmp_path / "asked.log"),))
    assert _compared(report["callables"][0]) == 6
    assert "as many as fit" not in report["callables"][0]["equivalence"]["note"]
