"""A program's compiled callable gets torch.utils.benchmark's figure beside the speedup of the
program's own calls: its last steady call's arguments timed again once the program has ended,
compiled and eagerly. The figure leaves the program as python runs it (its output and its counts
as a plain `python FILE` gives them); a callable whose guards no longer hold after the program
says so instead of compiling again; `--no-timing` takes none, nor shows the program's own; and where the two speedups differ
the program's is marked unreliable with both. Each program runs in a fresh process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from playground.engine.report import Timings
from playground.engine.report.timings import TorchBenchmark

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT_S = 600

#: A loop of steady calls whose callable prints at each call (a benchmark call would print
#: again), then a global its guards read changed after the loop: a call now would recompile.
PROGRAM = """
import torch

SCALE = 2.0


@torch.compile(backend="eager")
def step(x):
    print("step")
    return torch.sin(x) * SCALE + x.cos()


x = torch.linspace(0, 1, 4096).reshape(64, 64)
for _ in range(12):
    y = step(x)
print("sum", round(float(y.sum()), 3))
CHANGE
"""


def _program(tmp_path: Path, change: str = "") -> Path:
    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent(PROGRAM).replace("CHANGE", change))
    return path


def _check(path: Path, *flags: str) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "playground", "check", str(path), "--json", *flags]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, cwd=path.parent)
    assert done.stdout.strip(), done.stderr[-3000:]
    return json.loads(done.stdout)


def _plain(path: Path) -> str:
    env = {**os.environ, "TORCH_LOGS": "recompiles"}
    done = subprocess.run(
        [sys.executable, str(path)], capture_output=True, text=True, timeout=TIMEOUT_S, cwd=path.parent, env=env
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.torch
def test_a_callable_gets_torchs_benchmark_and_the_program_runs_as_python_runs_it(tmp_path: Path) -> None:
    path = _program(tmp_path)
    report = _check(path)
    assert report["error"] is None, report["error"]
    (section,) = report["callables"]
    bench = section["timings"]["benchmark"]
    assert bench["runs"] > 0 and bench["eager_ms"] > 0 and bench["compiled_ms"] > 0, bench
    # The medians are rounded to 0.1 us in the report, the speedup taken before.
    assert bench["speedup"] == pytest.approx(bench["eager_ms"] / bench["compiled_ms"], rel=0.05)
    # The benchmark's calls printed nothing into the program's output, and made no graph.
    assert report["output"]["text"] == _plain(path)
    assert (report["graph_count"], report["recompile_count"]) == (1, 0)
    assert report["phase_s"]["benchmark"] > 0


@pytest.mark.torch
def test_a_callable_whose_guards_no_longer_hold_is_not_compiled_again_for_the_benchmark(tmp_path: Path) -> None:
    path = _program(tmp_path, "SCALE = 3.0")
    report = _check(path)
    (section,) = report["callables"]
    bench = section["timings"]["benchmark"]
    assert bench.get("speedup") is None and bench["note"].startswith("not timed again:"), bench
    # As python: the program's own calls compiled once, and nothing after it.
    assert "Recompiling" not in _plain(path)
    assert (report["graph_count"], report["recompile_count"]) == (1, 0)


@pytest.mark.torch
def test_no_timing_takes_no_benchmark_and_shows_no_steady_figure(tmp_path: Path) -> None:
    path = _program(tmp_path)
    report = _check(path, "--no-timing")
    (section,) = report["callables"]
    # The program's own calls are not shown as timings either: the user turned timings off.
    assert section["timings"] is None
    assert "benchmark" not in report["phase_s"] or report["phase_s"]["benchmark"] == 0
    assert section["equivalence"] is not None  # its values are still compared
    cmd = [sys.executable, "-m", "playground", "check", str(path), "--no-timing"]
    text = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, cwd=path.parent).stdout
    assert "values:" in text and "steady" not in text and "torch.utils.benchmark" not in text, text


@pytest.mark.torch  # the worker's module imports torch
def test_speedups_that_differ_mark_the_programs_unreliable_with_both() -> None:
    from playground.worker.run.programs.program_bench import beside

    ours = Timings(eager_ms=9.5, compiled_ms=1.0, speedup=9.5)
    differs = beside(ours, TorchBenchmark(eager_ms=1.24, compiled_ms=1.0, speedup=1.24, runs=40))
    assert "9.50x" in differs.unreliable and "1.24x" in differs.unreliable
    assert differs.benchmark is not None and differs.speedup == 9.5
    agrees = beside(ours, TorchBenchmark(eager_ms=8.0, compiled_ms=1.0, speedup=8.0, runs=40))
    assert agrees.unreliable == "" and agrees.benchmark is not None
    said = Timings(speedup=9.5, unreliable="only 2 steady call(s) of it")
    assert beside(said, TorchBenchmark(speedup=1.0)).unreliable == "only 2 steady call(s) of it"
    assert beside(ours, None) == ours
