"""`compile-playground bisect`: for each lesson in snippets/bisect/, our result is what torch's
own CompilerBisector.do_bisect finds on the same code with a plain allclose test, in a fresh
process; the agreeing lesson runs no bisection; the workaround it names makes the failure go;
and a Ctrl-C mid-bisection leaves no process behind."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.processes import any_running

ROOT = Path(__file__).resolve().parents[2]
LESSONS = ROOT / "snippets" / "bisect"

#: Torch's own bisector on the snippet, in process, the test a plain allclose: the truth.
TRUTH = textwrap.dedent(
    """
    import contextlib, io, json, runpy, sys, tempfile
    import torch
    from torch._inductor.compiler_bisector import CompilerBisector
    m = runpy.run_path(sys.argv[1])
    fn = m["fn"]
    args = next(iter(m["inputs"]()))
    calls = [0]
    def test():
        calls[0] += 1
        torch._dynamo.reset()
        torch.manual_seed(7)
        eager = fn(*args)
        torch.manual_seed(7)
        compiled = torch.compile(fn, backend="inductor")(*args)
        return torch.allclose(eager, compiled)
    CompilerBisector.in_process_cache = tempfile.mkdtemp()
    with contextlib.redirect_stdout(io.StringIO()):
        r = CompilerBisector.do_bisect(test)
    found = None if r is None else {
        "backend": r.backend, "subsystem": r.subsystem,
        "bisect_number": r.bisect_number, "debug_info": r.debug_info, "steps": calls[0]}
    print(json.dumps(found))
    """
)


def _bisect(path: Path, *extra: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "playground.cli.main", "bisect", str(path), "--json", *extra],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _truth(path: Path) -> dict | None:
    out = subprocess.run(
        [sys.executable, "-c", TRUTH, str(path)], capture_output=True, text=True, timeout=600, cwd=ROOT
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("name", ["wrong_decomposition", "random_without_fallback"])
def test_bisect_finds_what_torch_finds(name: str) -> None:
    path = LESSONS / f"{name}.py"
    truth = _truth(path)
    assert truth is not None, "torch's bisector found nothing: the lesson no longer diverges"
    ours = _bisect(path)["bisection"]
    assert ours is not None
    assert {k: ours[k] for k in truth} == truth


def test_bisect_names_the_line_of_the_op() -> None:
    path = LESSONS / "wrong_decomposition.py"
    ours = _bisect(path)["bisection"]
    op = ours["debug_info"].split("op='aten.", 1)[1].split("'", 1)[0]
    calls = [i for i, row in enumerate(path.read_text().splitlines(), 1) if f"torch.{op}(" in row]
    assert ours["line"] == calls[0]


def test_agreeing_lesson_runs_no_bisection() -> None:
    path = LESSONS / "agree.py"
    assert _truth(path) is None
    result = _bisect(path)
    assert result["bisection"] is None and result["reason"]


def test_workaround_makes_the_failure_go() -> None:
    ours = _bisect(LESSONS / "random_without_fallback.py")["bisection"]
    assert ours["workaround"] == {"config": {"inductor.fallback_random": True}}
    flags = [f"--config={k}={json.dumps(v)}" for k, v in ours["workaround"]["config"].items()]
    assert _bisect(LESSONS / "random_without_fallback.py", *flags)["bisection"] is None


def test_sigint_mid_bisection_leaves_no_process(tmp_path: Path) -> None:
    path = LESSONS / "wrong_decomposition.py"
    private = tmp_path / "tmp"  # its own TMPDIR: another test's bisection has a state dir too
    private.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "playground.cli.main", "bisect", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "TMPDIR": str(private)},
    )
    assert proc.stderr is not None
    # The first step's progress: the bisection is under way. Torch's own warnings share stderr
    # (2.14.1's CPU build says "No CUDA runtime is found" first).
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if line.startswith("step"):
            break
    assert seen and seen[-1].startswith("step"), "".join(seen)[-2000:]
    os.kill(proc.pid, signal.SIGINT)
    assert proc.wait(timeout=30) == 128 + signal.SIGINT
    deadline = time.monotonic() + 10
    while any_running(f"playground.worker.run.bisect {path}") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any_running(f"playground.worker.run.bisect {path}")
    assert not list(private.glob("compile-playground-bisect-*")), "its state dir was left"


def test_ladder_suggests_bisect_when_a_stage_diverges() -> None:
    path = LESSONS / "wrong_decomposition.py"
    out = subprocess.run(
        [sys.executable, "-m", "playground.cli.main", "matrix", str(path), "--ladder"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "first divergence" in out.stdout
    assert f"compile-playground bisect {path}" in out.stdout


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("x = 1\n", "snippet error: MissingTarget"),
        (
            "import torch\n\ndef fn(x):\n    return x / 0 + int('nope')\n\ndef inputs():\n    yield (torch.ones(2),)\n",
            "snippet error: ValueError: invalid literal for int() with base 10: 'nope' (line 4)",
        ),
    ],
)
def test_a_snippet_that_fails_on_its_own_is_its_error_not_a_culprit(tmp_path: Path, source: str, expected: str) -> None:
    """Without this, the bisector judged every step failing and named `backend eager`."""
    path = tmp_path / "snippet.py"
    path.write_text(source)
    out = subprocess.run(
        [sys.executable, "-m", "playground.cli.main", "bisect", str(path), "--json"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert out.returncode == 2
    assert out.stdout == ""
    assert expected in out.stderr


def test_sigkill_of_the_front_end_mid_bisection_leaves_no_process(tmp_path: Path) -> None:
    """The bisection is its own process group: a front end killed outright signals nothing,
    and the parent-death signal ends the bisection and its step."""
    path = tmp_path / "wrong_decomposition.py"  # a path of its own, for any_running
    path.write_text((LESSONS / "wrong_decomposition.py").read_text())
    private = tmp_path / "tmp"  # its own TMPDIR: its state dir must go too
    private.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "playground.cli.main", "bisect", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "TMPDIR": str(private)},
    )
    assert proc.stderr is not None
    for line in proc.stderr:
        if line.startswith("step"):
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    deadline = time.monotonic() + 15
    while any_running(f"playground.worker.run.bisect {path}") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any_running(f"playground.worker.run.bisect {path}")
    assert not list(private.glob("compile-playground-bisect-*")), "its state dir was left"


async def test_the_apps_bisection_cancelled_mid_step_leaves_no_process(tmp_path: Path) -> None:
    """engine/bisecting.py's bisect, as the app's `s` runs it, cancelled after its first step."""
    import asyncio

    from playground.engine.bisecting import bisect

    path = tmp_path / "wrong_decomposition.py"
    path.write_text((LESSONS / "wrong_decomposition.py").read_text())
    first = asyncio.Event()
    task = asyncio.ensure_future(bisect(str(path), (), lambda step: first.set()))
    await asyncio.wait_for(first.wait(), 300)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    deadline = time.monotonic() + 10  # SIGKILLed: the kernel's reaping takes a moment
    while any_running(f"playground.worker.run.bisect {path}") and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert not any_running(f"playground.worker.run.bisect {path}")
