"""A program sees what `python PROG` would give it: the sys.path python makes (the program's
folder first, never the folder the playground was started in, torch's files named from
site-packages), and torch's logs as its own set_logs calls set them, while the playground still
reads every break and recompile. Each side runs in a fresh process; the truth is plain python's."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.torch

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT_S = 300


def _check(path: Path, cwd: Path, env: dict[str, str] | None = None, *flags: str) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "playground", "check", str(path), "--json", "--no-timing", *flags]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, cwd=cwd, env=env)
    assert done.stdout.strip(), done.stderr[-3000:]
    return json.loads(done.stdout)


def _python(path: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=TIMEOUT_S, cwd=cwd)


def _truth(path: Path, cwd: Path) -> dict[str, Any]:
    """tests/plain_truth.py's counts; TORCH_LOGS set, torch ignores the program's own set_logs."""
    env = {**os.environ, "TORCH_LOGS": "graph_breaks,recompiles"}
    cmd = [sys.executable, str(ROOT / "tests" / "plain_truth.py"), str(path)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, cwd=cwd, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


RECOMPILING = """
import torch

@torch.compile(backend="eager", dynamic=False)
def f(x):
    x = x + 1
    torch._dynamo.graph_break()
    return x * 2

for n in (3, 4):
    f(torch.randn(n))
"""


def _write(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(body))
    return path


def test_a_program_cannot_import_from_the_folder_it_was_started_in_as_python_cannot(tmp_path: Path) -> None:
    # The user's current folder holds a module the program's folder does not: python does not
    # look there for `python prog/prog.py`.
    _write(tmp_path / "only_in_cwd.py", "WHERE = 'cwd'\n")
    prog = _write(
        tmp_path / "prog" / "prog.py",
        """
        import json, sys
        import torch

        try:
            import only_in_cwd
            found = only_in_cwd.WHERE
        except ImportError:
            found = None
        print(json.dumps({"found": found, "first": sys.path[0]}))
        f = torch.compile(lambda x: x + 1, backend="eager")
        f(torch.ones(2))
        """,
    )
    plain = _python(prog, cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr[-2000:]
    truth = json.loads(plain.stdout.strip().splitlines()[-1])
    report = _check(prog, cwd=tmp_path)
    assert report["error"] is None, report["error"]
    seen = json.loads(report["output"]["text"].strip().splitlines()[-1])
    assert seen == truth == {"found": None, "first": str(prog.parent)}


@pytest.mark.parametrize("pythonpath", [None, "/nonexistent/theirs"])
def test_a_programs_subprocess_gets_the_pythonpath_python_gives_it(tmp_path: Path, pythonpath: str | None) -> None:
    # The playground starts its worker with its own root first on PYTHONPATH; the program's
    # child processes inherit the user's, as under `python PROG`.
    prog = _write(
        tmp_path / "prog.py",
        """
        import json, os, subprocess, sys
        import torch

        child = subprocess.run(
            [sys.executable, "-c", "import os; print(os.environ.get('PYTHONPATH'))"], capture_output=True, text=True
        )
        print(json.dumps({"mine": os.environ.get("PYTHONPATH"), "child": child.stdout.strip()}))
        f = torch.compile(lambda x: x + 1, backend="eager")
        f(torch.ones(2))
        """,
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    plain = subprocess.run([sys.executable, str(prog)], capture_output=True, text=True, timeout=TIMEOUT_S, env=env)
    assert plain.returncode == 0, plain.stderr[-2000:]
    truth = json.loads(plain.stdout.strip().splitlines()[-1])
    cmd = [sys.executable, "-m", "playground", "check", str(prog), "--json", "--no-timing"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, cwd=ROOT, env=env)
    report = json.loads(done.stdout)
    assert report["error"] is None, report["error"]
    seen = json.loads(report["output"]["text"].strip().splitlines()[-1])
    assert seen == truth == {"mine": pythonpath, "child": str(pythonpath)}


def _logged(text: str, artifact: str) -> list[str]:
    """The lines of one artifact, less the time and process id at their head."""
    return [line.split(" ", 3)[3] for line in text.splitlines() if f"[__{artifact}]" in line]


def test_a_programs_own_set_logs_prints_what_python_prints_and_is_still_read(tmp_path: Path) -> None:
    own_logs = RECOMPILING.replace("import torch\n", "import torch\n\ntorch._logging.set_logs(graph_breaks=True)\n", 1)
    prog = _write(tmp_path / "logs.py", own_logs + 'print("done")\n')
    plain = _python(prog, cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr[-2000:]
    printed = _logged(plain.stderr, "graph_breaks")
    assert printed and all(re.match(r"torch/_dynamo/\w+\.py:\d+\]", line) for line in printed), printed[:2]
    report = _check(prog, cwd=tmp_path)
    assert report["error"] is None, report["error"]
    shown = _logged(report["output"]["text"], "graph_breaks")
    # Each graph-break record as python printed it, line for line: the same file and line, the
    # same message, the same user code traceback (the program's frames only, none of ours).
    assert shown == printed
    # The recompiles the program did not ask to see are not printed, and are still read.
    assert not _logged(report["output"]["text"], "recompiles") and not _logged(plain.stderr, "recompiles")
    truth = _truth(prog, cwd=tmp_path)
    assert truth["graph_break_count"] == 2, truth
    for field in ("graph_count", "recompile_count", "graph_break_count"):
        assert report[field] == truth[field], (field, report[field], truth[field])


def test_a_program_that_compiles_without_inductor_finds_it_not_imported_as_python_does(tmp_path: Path) -> None:
    # The worker starts Inductor ahead of a run only where the run will use it: a program's
    # backend is its own, so a backend-eager program's process holds no Inductor compiler, as
    # under python (it also skips Inductor's start-up, 2 s of a 4 s program's `check`).
    prog = _write(
        tmp_path / "prog.py",
        """
        import json, sys
        import torch

        f = torch.compile(lambda x: x + 1, backend="eager")
        f(torch.ones(2))
        print(json.dumps({"compile_fx": "torch._inductor.compile_fx" in sys.modules}))
        """,
    )
    plain = _python(prog, cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr[-2000:]
    truth = json.loads(plain.stdout.strip().splitlines()[-1])
    assert truth == {"compile_fx": False}, truth  # torch's own behaviour here: else the test says nothing
    report = _check(prog, cwd=tmp_path)
    assert report["error"] is None, report["error"]
    assert json.loads(report["output"]["text"].strip().splitlines()[-1]) == truth


SNIPPET_RECOMPILING = """
import torch

def fn(x):
    return x * 2

def inputs():
    return [(torch.randn(3),), (torch.randn(4),)]

SETTINGS = {"backend": "eager", "dynamic": False}
"""


@pytest.mark.parametrize("torch_logs", ["graph_breaks", "recompiles", "+dynamo"])
def test_torch_logs_in_the_environment_prints_what_python_prints_and_every_count_is_still_read(
    tmp_path: Path, torch_logs: str
) -> None:
    # Under TORCH_LOGS torch's set_logs only warns and returns: the playground's own settings
    # went with it, and a user debugging with TORCH_LOGS=graph_breaks exported was told
    # 0 recompiles where torch made 2.
    prog = _write(tmp_path / "prog.py", RECOMPILING)
    env = {**os.environ, "TORCH_LOGS": torch_logs}
    plain = subprocess.run(
        [sys.executable, str(prog)], capture_output=True, text=True, timeout=TIMEOUT_S, cwd=tmp_path, env=env
    )
    assert plain.returncode == 0, plain.stderr[-2000:]
    truth = _truth(prog, cwd=tmp_path)
    assert truth["recompile_count"] == 2 and truth["graph_break_count"] == 2, truth
    report = _check(prog, tmp_path, env)
    assert report["error"] is None, report["error"]
    for field in ("graph_count", "recompile_count", "graph_break_count"):
        assert report[field] == truth[field], (field, report[field], truth[field])
    # What python printed of the artifacts the setting names, record for record.
    for artifact in ("graph_breaks", "recompiles"):
        assert _logged(report["output"]["text"], artifact) == _logged(plain.stderr, artifact), artifact
    # A snippet too: the counts (its output is the snippet's own, the harness's calls are ours).
    snip = _write(tmp_path / "snip.py", SNIPPET_RECOMPILING)
    assert _check(snip, tmp_path, env)["recompile_count"] == 1


def test_a_programs_malloc_is_glibcs_own_as_under_python(tmp_path: Path) -> None:
    # A run's child keeps freed memory for reuse (no mmap below 1 GiB): a program's own timings
    # of large tensors read twice as fast under it (nanoGPT's bench.py: 60 against 120 ms a
    # step). glibc maps a 64 MiB block of its own (over its 32 MiB ceiling) in a plain process.
    prog = _write(
        tmp_path / "prog.py",
        """
        import ctypes, json
        import torch

        libc = ctypes.CDLL(None)
        libc.malloc.restype = ctypes.c_void_p
        libc.malloc.argtypes = [ctypes.c_size_t]
        libc.free.argtypes = [ctypes.c_void_p]
        f = torch.compile(lambda x: x + 1, backend="eager")
        f(torch.ones(2))
        block = libc.malloc(64 << 20)
        heap = [line for line in open("/proc/self/maps") if line.rstrip().endswith("[heap]")]
        low, high = (int(x, 16) for x in heap[0].split()[0].split("-")) if heap else (0, 0)
        print(json.dumps({"in_the_heap": low <= block < high}))
        libc.free(block)
        """,
    )
    plain = _python(prog, cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr[-2000:]
    truth = json.loads(plain.stdout.strip().splitlines()[-1])
    assert truth == {"in_the_heap": False}, truth  # glibc's behaviour here: else the test says nothing
    report = _check(prog, cwd=tmp_path)
    assert report["error"] is None, report["error"]
    assert json.loads(report["output"]["text"].strip().splitlines()[-1]) == truth


def test_a_programs_argv0_is_the_file_as_the_command_line_spelled_it(tmp_path: Path) -> None:
    prog = _write(
        tmp_path / "sub" / "prog.py",
        """
        import json, sys
        import torch

        torch.compile(lambda x: x + 1, backend="eager")(torch.ones(2))
        print(json.dumps({"argv0": sys.argv[0], "file": __file__, "args": sys.argv[1:]}))
        """,
    )
    typed = os.path.join("sub", "prog.py")
    plain = subprocess.run(
        [sys.executable, typed, "--x", "1"], capture_output=True, text=True, timeout=TIMEOUT_S, cwd=tmp_path
    )
    assert plain.returncode == 0, plain.stderr[-2000:]
    truth = json.loads(plain.stdout.strip().splitlines()[-1])
    assert truth == {"argv0": typed, "file": str(prog), "args": ["--x", "1"]}, truth
    cmd = [sys.executable, "-m", "playground", "check", typed, "--json", "--no-timing", "--", "--x", "1"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, cwd=tmp_path)
    report = json.loads(done.stdout)
    assert report["error"] is None, report["error"]
    assert json.loads(report["output"]["text"].strip().splitlines()[-1]) == truth


def test_a_programs_sigint_is_pythons_keyboard_interrupt(tmp_path: Path) -> None:
    """python starts with its own SIGINT handler: a program that interrupts itself catches a
    KeyboardInterrupt and goes on, where the kernel's default would kill it."""
    prog = _write(
        tmp_path / "prog.py",
        """
        import json, os, signal, time
        import torch

        f = torch.compile(lambda x: x + 1, backend="eager")
        f(torch.ones(2))
        handler = signal.getsignal(signal.SIGINT)
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(2)
            caught = False
        except KeyboardInterrupt:
            caught = True
        f(torch.ones(2))
        print(json.dumps({"handler": getattr(handler, "__name__", str(handler)), "caught": caught}))
        """,
    )
    plain = _python(prog, tmp_path)
    assert plain.returncode == 0, plain.stderr[-2000:]
    truth = json.loads(plain.stdout.strip().splitlines()[-1])
    assert truth == {"handler": "default_int_handler", "caught": True}, truth
    report = _check(prog, tmp_path)
    assert report["error"] is None, report["error"]
    assert json.loads(report["output"]["text"].strip().splitlines()[-1]) == truth
    assert report["callables"][0]["calls"] == 2


def test_a_programs_own_exception_is_python_s_traceback(tmp_path: Path) -> None:
    # The frames python prints for the program's uncaught exception, the compiled callable's
    # included, and none of ours (the run, our patch between the program and its callable).
    prog = _write(
        tmp_path / "prog.py",
        """
        import torch

        @torch.compile(backend="eager")
        def f(x):
            return g(x)

        def g(x):
            raise ValueError("no")

        f(torch.ones(2))
        """,
    )
    plain = _python(prog, cwd=tmp_path)
    assert plain.returncode == 1

    def frames(text: str) -> list[str]:
        return [line.strip() for line in text.splitlines() if line.strip().startswith("File ")]

    truth = frames(plain.stderr)
    assert truth and all(str(prog) in line or "torch" in line for line in truth), truth
    report = _check(prog, cwd=tmp_path)
    assert report["error"]["type"] == "ValueError"
    ours = [line for line in frames(report["error"]["detail"]) if "/playground/" in line]
    assert not ours, ours
    assert [f for f in frames(report["error"]["detail"]) if str(prog) in f] == [f for f in truth if str(prog) in f]


ENVIRON = """
import os
import torch

torch.compile(lambda x: x + 1, backend="eager")(torch.ones(2))
print(sorted((k, v) for k, v in os.environ.items() if k.startswith(("TORCH", "PYTORCH"))))
"""


@pytest.mark.parametrize("threads", [None, "3"])
def test_a_programs_torch_variables_are_the_ones_python_gives_it(tmp_path: Path, threads: str | None) -> None:
    # The worker sets two for torch's import (CUDA's check by NVML, Inductor in one thread); the
    # program, and what it starts, sees the user's own, as under python.
    path = tmp_path / "environ.py"
    path.write_text(ENVIRON)
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("TORCHINDUCTOR_COMPILE_THREADS", "PYTORCH_NVML_BASED_CUDA_CHECK")
    }
    if threads is not None:
        env["TORCHINDUCTOR_COMPILE_THREADS"] = threads
    python = subprocess.run(
        [sys.executable, str(path)], capture_output=True, text=True, timeout=TIMEOUT_S, cwd=tmp_path, env=env
    )
    assert python.returncode == 0, python.stderr[-2000:]
    report = _check(path, tmp_path, env)
    assert report["output"]["text"] == python.stdout
    assert ("TORCHINDUCTOR_COMPILE_THREADS" in python.stdout) == (threads is not None)
