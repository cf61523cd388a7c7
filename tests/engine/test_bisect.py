"""`compile-playground bisect`: for each lesson in snippets/bisect/, our result is what torch's
own CompilerBisector.do_bisect finds on the same code with a plain allclose test (at the accuracy harness's 1e-4), in a fresh
process; the agreeing lesson runs no bisection; the workaround it names makes the failure go;
and a Ctrl-C mid-bisection leaves no process behind."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from tests.processes import any_running

ROOT = Path(__file__).resolve().parents[2]
LESSONS = ROOT / "snippets" / "bisect"

#: Torch's own bisector on the snippet, in process, the test a plain allclose at the accuracy
#: harness's 1e-4: the truth. At allclose's default (rtol 1e-5, atol 1e-8) rounding alone
#: fails: Inductor's own GELU decomposition is a few ulps off aten.gelu near zero, and the
#: bisector would stop there, on a difference our fp64 rule rightly accepts.
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
        return torch.allclose(eager, compiled, rtol=1e-4, atol=1e-4)
    CompilerBisector.in_process_cache = tempfile.mkdtemp()
    with contextlib.redirect_stdout(io.StringIO()):
        r = CompilerBisector.do_bisect(test)
    found = None if r is None else {
        "backend": r.backend, "subsystem": r.subsystem,
        "bisect_number": r.bisect_number, "debug_info": r.debug_info, "steps": calls[0]}
    print(json.dumps(found))
    """
)


def _bisect(path: Path, *extra: str, env: dict[str, str] | None = None) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "playground.cli.main", "bisect", str(path), "--json", *extra],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env=env,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@functools.cache
def lesson_bisection(name: str) -> dict:
    """`bisect --json` of the lesson `name`, run once per test process: the tests below (and
    test_decomp_table's) check different things of the same bisection."""
    return _bisect(LESSONS / f"{name}.py")


@functools.cache
def _truth(path: Path) -> dict | None:
    """Torch's own bisector's culprit for `path`, run once per test process (several tests
    compare with the same lesson's truth)."""
    # Its own Inductor cache: torch's caches do not key on the decomposition table, so a graph
    # another process cached without the lesson's registration would be served to it (and the
    # bisector would find nothing).
    cache = tempfile.mkdtemp(prefix="bisect-truth-cache-")
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": cache}
    try:
        out = subprocess.run(
            [sys.executable, "-c", TRUTH, str(path)], capture_output=True, text=True, timeout=600, cwd=ROOT, env=env
        )
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(
    ("name", "call"),
    [
        ("wrong_decomposition", "torch.sin"),
        ("random_without_fallback", "torch.rand"),
        ("custom_pass", "torch.nn.functional.gelu"),
    ],
)
def test_bisect_finds_what_torch_finds(name: str, call: str) -> None:
    path = LESSONS / f"{name}.py"
    truth = _truth(path)
    assert truth is not None, "torch's bisector found nothing: the lesson no longer diverges"
    ours = lesson_bisection(name)["bisection"]
    assert ours is not None
    assert {k: ours[k] for k in truth} == truth
    # The first value that differs is the lesson's own call of the op (fn's line, not a helper's).
    op = ours["first_diverging_op"]
    calls = [i for i, row in enumerate(path.read_text().splitlines(), 1) if f"{call}(" in row]
    assert op["op"] == call and op["line"] == calls[-1]


def test_bisect_names_the_line_of_the_op() -> None:
    path = LESSONS / "wrong_decomposition.py"
    ours = lesson_bisection("wrong_decomposition")["bisection"]
    op = ours["debug_info"].split("op='aten.", 1)[1].split("'", 1)[0]
    calls = [i for i, row in enumerate(path.read_text().splitlines(), 1) if f"torch.{op}(" in row]
    assert ours["line"] == calls[0]


#: A chain of steps whose second op has a wrong decomposition: the first value that differs is
#: not the output. The snippet and the truth are both made from it.
CHAIN = [("a", "torch.cos(x)"), ("b", "a * 3"), ("c", "torch.tanh(b)"), ("d", "c + a")]
CHAIN_HEAD = (
    "import torch\n"
    "from torch._inductor.decomposition import decompositions\n\n"
    'SETTINGS = {"backend": "inductor", "fullgraph": True, "target": "fn"}\n'
    "decompositions[torch.ops.aten.tanh.default] = lambda x: torch.sigmoid(x)\n\n\n"
)

#: Each prefix of CHAIN compiled on its own with Inductor, compared with eager by allclose:
#: the index of the first step whose value differs (torch alone, no all-outputs graph).
CHAIN_TRUTH = textwrap.dedent(
    """
    import json, sys
    import torch
    from torch._inductor.decomposition import decompositions
    decompositions[torch.ops.aten.tanh.default] = lambda x: torch.sigmoid(x)
    chain = json.loads(sys.argv[1])
    torch.manual_seed(0)
    x = torch.randn(8)
    first = None
    for k in range(len(chain)):
        body = "".join(f"    {name} = {expr}\\n" for name, expr in chain[: k + 1])
        space = {"torch": torch}
        exec(f"def prefix(x):\\n{body}    return {chain[k][0]}\\n", space)
        torch._dynamo.reset()
        if not torch.allclose(space["prefix"](x), torch.compile(space["prefix"], backend="inductor")(x)):
            first = k
            break
    print(json.dumps(first))
    """
)


def test_first_diverging_op_is_the_first_value_that_differs(tmp_path: Path) -> None:
    body = "".join(f"    {name} = {expr}\n" for name, expr in CHAIN)
    source = f"{CHAIN_HEAD}def fn(x):\n{body}    return d\n\n\ndef inputs():\n    yield (torch.randn(8),)\n"
    path = tmp_path / "chain.py"
    path.write_text(source)
    out = subprocess.run(
        [sys.executable, "-c", CHAIN_TRUTH, json.dumps(CHAIN)], capture_output=True, text=True, timeout=600
    )
    assert out.returncode == 0, out.stderr[-2000:]
    first = json.loads(out.stdout.strip().splitlines()[-1])
    assert first is not None and first > 0, "the chain no longer diverges after its first step"
    name, expr = CHAIN[first]
    line = next(i for i, row in enumerate(source.splitlines(), 1) if row.strip() == f"{name} = {expr}")
    op = _bisect(path)["bisection"]["first_diverging_op"]
    assert op["line"] == line
    assert op["op"] == expr.split("(", 1)[0]  # "torch.tanh"
    assert op["how"] and op["max_abs_diff"] > 0


def _in_environ(needle: str) -> list[int]:
    """The processes whose environment holds `needle` (a test's private TMPDIR=...): a step's
    Inductor compile workers carry it too, whatever their command line."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            with contextlib.suppress(OSError):
                if needle.encode() in (entry / "environ").read_bytes().split(b"\0"):
                    found.append(int(entry.name))
    return found


async def test_a_real_models_bisection_completes_with_progress(tmp_path: Path) -> None:
    """GPT-2 in training, through the app's async bisection: steps arrive while it runs, the
    culprit is dropout's decomposition, the first diverging op is dropout where
    transformers' own source calls its dropout layer, and the workaround makes eager and compiled agree."""
    from playground.engine.bisecting import bisect

    pytest.importorskip("transformers")
    path = ROOT / "snippets" / "models" / "gpt2_dropout.py"
    steps = []
    result = await bisect(str(path), (), steps.append)
    found = result.bisection
    assert found is not None and len(steps) >= 2 and steps[-1].steps == found.steps
    # Once it halves the decompositions' range, each line bounds the steps, and the bound holds.
    bounds = [s.at_most for s in steps if s.at_most is not None]
    assert bounds and found.steps <= min(bounds)
    assert found.subsystem == "decomposition" and "native_dropout" in (found.debug_info or "")
    assert found.workaround == {"config": {"inductor.fallback_random": True}}
    op = found.first_diverging_op
    assert op is not None and op.op == "torch.nn.functional.dropout" and op.line is None
    file, _, line = (op.source or "").rpartition(":")
    # The innermost frame Dynamo recorded: the library's call of its dropout layer (`self.drop(...)`).
    assert file.endswith("modeling_gpt2.py") and "drop" in Path(file).read_text().splitlines()[int(line) - 1]
    flags = [f"--config={k}={json.dumps(v)}" for k, v in found.workaround["config"].items()]
    assert _bisect(path, *flags)["bisection"] is None


def _interrupted_at(path: Path, private: Path, step: str, settle: float = 0.0) -> None:
    """Starts `bisect path` with its own TMPDIR, SIGINTs it once its stderr says `step` (and
    `settle` seconds later), and asserts it exits as interrupted, with no process of its own
    left and no state dir."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "playground.cli.main", "bisect", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "TMPDIR": str(private)},
    )
    assert proc.stderr is not None
    # Torch's own warnings share stderr (2.14.1's CPU build says "No CUDA runtime is found" first).
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if line.startswith(step):
            break
    assert seen and seen[-1].startswith(step), "".join(seen)[-2000:]
    time.sleep(settle)
    os.kill(proc.pid, signal.SIGINT)
    assert proc.wait(timeout=30) == 128 + signal.SIGINT
    deadline = time.monotonic() + 10
    while _in_environ(f"TMPDIR={private}") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _in_environ(f"TMPDIR={private}")
    assert not list(private.glob("compile-playground-bisect-*")), "its state dir was left"


def test_a_real_models_bisection_cancelled_mid_step_leaves_nothing(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    private = tmp_path / "tmp"
    private.mkdir()
    # Mid-way through the second step: a fresh process compiling the model.
    _interrupted_at(ROOT / "snippets" / "models" / "gpt2_dropout.py", private, "step 2", settle=3)


def test_agreeing_lesson_runs_no_bisection() -> None:
    path = LESSONS / "agree.py"
    assert _truth(path) is None
    result = _bisect(path)
    assert result["bisection"] is None and result["reason"]


@pytest.mark.parametrize(
    ("name", "workaround"),
    [
        ("random_without_fallback", {"inductor.fallback_random": True}),
        ("custom_pass", {"inductor.disabled_passes": "post_grad_custom_post_pass"}),
    ],
)
def test_workaround_makes_the_failure_go(name: str, workaround: dict) -> None:
    ours = lesson_bisection(name)["bisection"]
    assert ours["workaround"] == {"config": workaround}
    flags = [f"--config={k}={json.dumps(v)}" for k, v in ours["workaround"]["config"].items()]
    assert _bisect(LESSONS / f"{name}.py", *flags)["bisection"] is None


def test_sigint_mid_bisection_leaves_no_process(tmp_path: Path) -> None:
    private = tmp_path / "tmp"  # its own TMPDIR: another test's bisection has a state dir too
    private.mkdir()
    _interrupted_at(LESSONS / "wrong_decomposition.py", private, "step")


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


@pytest.mark.parametrize(
    ("source", "extra", "expected"),
    [
        (
            "import torch\n\ndef fn(x):\n    return x + 1\n\ndef inputs():\n    yield (torch.ones(2),)\n",
            ["--config", "inductor.no_such_key=1"],
            "settings error: torch ",
        ),
        (
            'import torch\n\nSETTINGS = {"fullgraph": True}\n\ndef fn(x):\n    print("hi")\n    return x + 1\n\n'
            "def inputs():\n    yield (torch.ones(2),)\n",
            [],
            "compile error: the compiled run raised before any value was compared: ",
        ),
    ],
)
def test_a_bad_flag_or_a_compile_that_raises_is_said_not_bisected(
    tmp_path: Path, source: str, extra: list[str], expected: str
) -> None:
    """Before, an unknown --config key was the snippet's error, and a compiled run that raised
    was bisected to `backend eager` (every step raised)."""
    path = tmp_path / "snippet.py"
    path.write_text(source)
    out = subprocess.run(
        [sys.executable, "-m", "playground.cli.main", "bisect", str(path), "--json", *extra],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert out.returncode == 2 and out.stdout == ""
    assert f"compile-playground bisect: {expected}" in out.stderr


def test_a_module_class_the_snippet_defines_is_bisected(tmp_path: Path) -> None:
    """Dynamo imports a traced class's module by name: loaded under a name runpy gives, every
    compile raised and the bisector named backend eager."""
    lesson = (LESSONS / "wrong_decomposition.py").read_text()
    head = lesson.split("def fn(x):", 1)[0]
    path = tmp_path / "net.py"
    path.write_text(
        head + "class Net(torch.nn.Module):\n    def forward(self, x):\n        return torch.sin(x) + 1\n\n\n"
        "model = Net()\n\n\ndef inputs():\n    yield (torch.randn(8),)\n"
    )
    ours = _bisect(path)["bisection"]
    assert ours is not None and ours["subsystem"] == "decomposition", ours
    assert ours["first_diverging_op"]["op"] == "torch.sin"


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
    while any_running(f"playground.worker.run.bisection.bisect {path}") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any_running(f"playground.worker.run.bisection.bisect {path}")
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
    while any_running(f"playground.worker.run.bisection.bisect {path}") and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert not any_running(f"playground.worker.run.bisection.bisect {path}")
