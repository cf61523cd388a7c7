"""`q` in every phase of a run, through a real pseudo-terminal and the real app: while torch is
starting, while the template warms Inductor, during a long compile (Dynamo's trace, and Inductor's
with its C++ compilers running), while the snippet runs, while the steady state is timed, while
two ranks compile, and while a bisection's steps run (q quits from its screen too).
Each time the terminal is given back (the alternate screen left) and the app has exited within
QUIT_S of the key, and no process of ours is left: not the app's, not the worker's (its template,
a run's child, the spare, a compiler), not one the snippet started in a session of its own.
A template busy in torch's own code reads no shutdown line: it used to be waited on for 3 s. On a
machine busier than its cores (2 cores shared by several test sessions: a load of 9 to 13) every
quit is slower, an idle one too: there the test holds each phase to the idle quit measured alongside."""

from __future__ import annotations

import fcntl
import os
import signal
import struct
import subprocess
import sys
import termios
import textwrap
import time
from pathlib import Path

import pytest

from tests.processes import read_pty

ROOT = Path(__file__).resolve().parents[2]
#: The bound: from the key to the shell's prompt, on a machine with room (its load below its cores).
QUIT_S = 0.5
#: What a busy template may add to an idle quit: the shutdown line's wait (CLOSE_GRACE_S, 0.15 s),
#: then SIGTERM's handler and the kills, with room for a loaded machine's scheduling. It was 3 s.
BUSY_SLACK_S = 0.6

SIMPLE = """\
import torch

def fn(x):
    return torch.sin(x) + 1

def inputs():
    return [(torch.randn(8),)]
"""

#: Dynamo traces a few thousand ops: seconds of tracing in one compile.
LONG_COMPILE = """\
import torch

def fn(x):
    for i in range(4000):
        x = x * 1.0001 + i
    return x

def inputs():
    return [(torch.randn(8),)]
"""

#: Inductor generates and builds C++ for a few seconds here: the compilers are processes of their own.
INDUCTOR_COMPILE = """\
import torch

def fn(x):
    for i in range(60):
        x = torch.sin(x) * (i + 1) + torch.cos(x @ x.T)[: x.shape[0], : x.shape[1]]
    return x

def inputs():
    return [(torch.randn(16, 16),)]
"""

#: Each call sleeps in eager code, so the timing loop runs for many seconds; each call writes its
#: process's pid down, so the test knows the timing has begun (a process past its first calls)
#: without reading the status line (a progress line may be replaced before it is drawn).
SLOW_CALLS = """\
import os, time
import torch

@torch.compiler.disable
def wait():
    with open(os.environ["QUIT_TEST_CALLS"], "a") as fh:
        fh.write(f"{os.getpid()}\\n")
    time.sleep(0.05)

def fn(x):
    wait()
    return x + 1

def inputs():
    return [(torch.randn(8),)]
"""

#: The run's own code runs for a minute, after starting a process in a session of its own (out of
#: the worker's process group: only the template's sweep finds it); the pid is written down.
LONG_RUN = """\
import os, subprocess, time
import torch

@torch.compiler.disable
def slow():
    proc = subprocess.Popen(["sleep", "120"], start_new_session=True)
    with open(os.environ["QUIT_TEST_PIDS"], "a") as fh:
        fh.write(f"{proc.pid}\\n")
    time.sleep(120)

def fn(x):
    slow()
    return x + 1

def inputs():
    return [(torch.randn(8),)]
"""

#: Inductor's values wrong on purpose (snippets/bisect/wrong_decomposition.py): Equiv says FAIL,
#: so `s` starts a bisection, whose steps are processes of their own.
WRONG_SIN = """\
import torch
from torch._inductor.decomposition import decompositions

decompositions[torch.ops.aten.sin.default] = lambda x: torch.cos(x)

def fn(x):
    return torch.sin(x) + 1

def inputs():
    return [(torch.randn(8),)]
"""


def _read(fd: int, seconds: float, until: bytes = b"") -> bytes:
    return read_pty(fd, seconds, until, poll_s=0.02)


def _tree() -> dict[int, tuple[int, int, bytes]]:
    """pid -> (parent, session, state) for every process."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    stat = fh.read()
            except OSError:
                continue
            fields = stat[stat.rfind(b")") + 2 :].split()
            found[int(entry)] = (int(fields[1]), int(fields[3]), fields[0])
    return found


def _ours(root: int) -> set[int]:
    """`root` and every process below it, and every process of a session one of them leads."""
    tree = _tree()
    mine, grew = {root}, True
    while grew:
        sessions = {pid for pid in mine}
        more = {pid for pid, (parent, sid, _) in tree.items() if parent in mine or sid in sessions}
        grew = not more <= mine
        mine |= more
    return mine


def _alive(pids: set[int]) -> set[int]:
    tree = _tree()
    return {pid for pid in pids if pid in tree and tree[pid][2] != b"Z"}


def _compiler_running(root: int) -> bool:
    """A C++ compiler (Inductor's build of a kernel) is running below `root`."""
    for pid in _ours(root):
        try:
            if b"cc1plus" in Path(f"/proc/{pid}/cmdline").read_bytes():
                return True
        except OSError:
            continue
    return False


def _launch(tmp_path: Path, snippet: str, backend: str, *extra: str) -> tuple[subprocess.Popen[bytes], int, Path]:
    path = tmp_path / "snippet.py"
    path.write_text(textwrap.dedent(snippet))
    pids_file = tmp_path / "pids"
    pids_file.write_text("")
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 200, 0, 0))
    app = subprocess.Popen(
        [sys.executable, "-m", "playground", str(path), "--backend", backend, *extra],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=tmp_path,
        env={
            **os.environ,
            "TERM": "xterm-256color",
            "PYTHONPATH": str(ROOT),
            "QUIT_TEST_PIDS": str(pids_file),
            "QUIT_TEST_CALLS": str(tmp_path / "calls"),
        },
        start_new_session=True,
    )
    os.close(slave)
    return app, master, pids_file


def _press_q(app: subprocess.Popen[bytes], master: int, pids_file: Path) -> tuple[float, float, set[int]]:
    """q now: seconds to the terminal given back, to the app's exit, and what of ours is left."""
    ours = _ours(app.pid) | {int(p) for p in pids_file.read_text().split()}
    assert len(ours) >= 2, "no worker below the app"
    pressed = time.monotonic()
    os.write(master, b"q")
    tail = _read(master, 10, until=b"\x1b[?1049l")
    given_back = time.monotonic() - pressed
    assert b"\x1b[?1049l" in tail, tail[-400:]  # the alternate screen left
    assert app.wait(10) == 0
    return given_back, time.monotonic() - pressed, _alive(ours)


def _cleanup(app: subprocess.Popen[bytes], master: int, pids_file: Path) -> None:
    if app.poll() is None:
        os.killpg(app.pid, signal.SIGKILL)
        app.wait()
    for pid in _alive(_ours(app.pid) | {int(p) for p in pids_file.read_text().split()}):
        os.kill(pid, signal.SIGKILL)
    os.close(master)


@pytest.fixture(scope="module")
def idle_quit(tmp_path_factory: pytest.TempPathFactory) -> float:
    """q with nothing running (the run done, the template waiting): the app's own floor, the
    terminal restored and the worker closed the graceful way, on this machine as loaded now."""
    app, master, pids_file = _launch(tmp_path_factory.mktemp("idle"), SIMPLE, "eager")
    try:
        screen = _read(master, 180, until=b"done in")
        assert b"done in" in screen, screen[-600:]
        time.sleep(1.0)
        _, exited, left = _press_q(app, master, pids_file)
        assert not left, f"left behind after q when idle: {sorted(left)}"
        print(f"q when idle: exited after {exited:.3f} s")
        return exited
    finally:
        _cleanup(app, master, pids_file)


#: Each phase: its name, the snippet, the backend, what the screen shows once it has begun, the
#: command line's extra flags (benchmarks/quit.py times the same phases).
PHASES = [
    ("starting torch", SIMPLE, "eager", b"starting torch", ()),
    ("starting Inductor", SIMPLE, "inductor", b"starting Inductor", ()),
    ("a long compile", LONG_COMPILE, "aot_eager", b"compiling call 1", ()),
    ("an Inductor compile", INDUCTOR_COMPILE, "inductor", b"compiling call 1", ()),
    ("a run", LONG_RUN, "eager", b"compiling call 1", ()),
    ("the timing", SLOW_CALLS, "eager", b"compiling call 1", ()),
    ("two ranks compiling", LONG_COMPILE, "aot_eager", b"compiling call 1", ("--ranks", "2")),
    ("a bisection", WRONG_SIN, "inductor", b"equiv FAIL", ()),
]


def reach(phase: str, shown: bytes, app: subprocess.Popen[bytes], master: int, pids_file: Path) -> None:
    """Wait until the app is inside `phase`."""
    screen = _read(master, 180, until=shown)
    assert shown in screen, screen[-600:]
    if phase == "a run":  # the snippet's own process has started, and the run sleeps
        end = time.monotonic() + 60
        while not pids_file.read_text().strip() and time.monotonic() < end:
            time.sleep(0.05)
        assert pids_file.read_text().strip(), "the snippet's process never started"
    elif phase in ("a long compile", "two ranks compiling"):
        time.sleep(0.5)  # well inside Dynamo's trace of the 8000 ops
    elif phase == "the timing":  # a process has made more calls than the snippet's one input
        calls = pids_file.with_name("calls")
        end = time.monotonic() + 120
        while time.monotonic() < end:
            made = calls.read_text().split() if calls.exists() else []
            if any(made.count(pid) >= 4 for pid in set(made)):
                break
            time.sleep(0.05)
        else:
            raise AssertionError("the timing loop never began")
    elif phase == "an Inductor compile":  # q while a kernel's C++ is being built
        end = time.monotonic() + 120
        while not _compiler_running(app.pid) and time.monotonic() < end:
            time.sleep(0.05)
        assert _compiler_running(app.pid), "Inductor never started a compiler"
    elif phase == "a bisection":
        os.write(master, b"s")
        steps = _read(master, 120, until=b"step 1")
        assert b"step 1" in steps, steps[-600:]


@pytest.mark.parametrize(
    ("phase", "snippet", "backend", "shown", "extra"),
    PHASES,
    ids=["torch", "inductor", "compile", "inductor-compile", "run", "timing", "ranks", "bisection"],
)
def test_q_leaves_at_once_in_every_phase(
    tmp_path: Path,
    idle_quit: float,
    phase: str,
    snippet: str,
    backend: str,
    shown: bytes,
    extra: tuple[str, ...],
):
    app, master, pids_file = _launch(tmp_path, snippet, backend, *extra)
    try:
        reach(phase, shown, app, master, pids_file)
        given_back, exited, left = _press_q(app, master, pids_file)
        print(f"q during {phase}: terminal back after {given_back:.3f} s, exited after {exited:.3f} s")
        assert not left, f"left behind after q during {phase}: {sorted(left)}"
        # A busy template costs the quit no more than the graceful line's wait and the SIGTERM's.
        assert exited < idle_quit + BUSY_SLACK_S, f"q during {phase}: {exited:.3f} s, when idle {idle_quit:.3f} s"
        if os.getloadavg()[0] < (os.cpu_count() or 1):  # a machine with room: the 0.5 s goal
            assert given_back < QUIT_S and exited < QUIT_S, (
                f"q during {phase}: terminal back after {given_back:.3f} s, exited after {exited:.3f} s"
            )
    finally:
        _cleanup(app, master, pids_file)
