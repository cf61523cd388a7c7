"""The app's terminal goes away under it (an SSH session drops, a window is closed, tmux's
server is killed): the app quits, its worker with it, whatever it was doing. It had stayed for
ever, blocked in Textual's shutdown on a write to the dead terminal, deaf to SIGTERM.

Each case runs the real app in a real pseudo-terminal and closes the terminal's other end; the
processes are found by a tag in their environment, which the worker and its run children
inherit, so a process of ours is found even after it has left the app's session."""

from __future__ import annotations

import fcntl
import os
import signal
import struct
import subprocess
import sys
import termios
import time
import uuid
from pathlib import Path

import pytest
from tui_fakes import FIXTURES

from tests.processes import read_pty

ROOT = Path(__file__).resolve().parents[2]

#: A compile that is still going when the terminal goes (the call sleeps in eager code).
SLOW = """\
import time
import torch


def fn(x):
    time.sleep(60)
    return x.sin()


def inputs():
    return [(torch.randn(4),)]
"""


def _ours(tag: str) -> list[tuple[int, str]]:
    """Live processes whose environment holds `tag`: the app, its worker and the worker's children."""
    found = []
    needle = f"PLAYGROUND_TEST_TAG={tag}".encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as fh:
                environ = fh.read()
            with open(f"/proc/{entry}/stat") as fh:
                state = fh.read().rsplit(")", 1)[1].split()[0]
            with open(f"/proc/{entry}/cmdline", "rb") as fh:
                cmd = fh.read().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, IndexError):
            continue
        if needle in environ.split(b"\0") and state != "Z":
            found.append((int(entry), cmd))
    return found


def _controlling_tty() -> None:
    # In the child, after start_new_session's setsid: the pseudo-terminal becomes the session's
    # controlling terminal, so closing its other end sends SIGHUP, as a dropped SSH session does.
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


CASES = [
    ("idle", True, b"done in", b"", None),
    ("idle-no-sighup", False, b"done in", b"", None),
    ("mid-compile", True, b"compiling", b"", None),
    ("mid-compile-no-sighup", False, b"compiling", b"", None),
    ("pane-switch", False, b"done in", b"8", None),
    ("sigterm-after", True, b"compiling", b"", signal.SIGTERM),
]


@pytest.mark.parametrize(("case", "controlling", "until", "keys", "then"), CASES, ids=[c[0] for c in CASES])
def test_the_terminal_going_away_ends_the_app_and_its_worker(
    tmp_path: Path, case: str, controlling: bool, until: bytes, keys: bytes, then: int | None
):
    snippet = tmp_path / "snippet.py"
    if "compile" in case or then is not None:
        snippet.write_text(SLOW)
    else:
        snippet.write_bytes((FIXTURES / "branch.py").read_bytes())
    tag = uuid.uuid4().hex
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    app = subprocess.Popen(
        [sys.executable, "-m", "playground", str(snippet), "--backend", "eager"],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=tmp_path,
        env={**os.environ, "TERM": "xterm-256color", "PYTHONPATH": str(ROOT), "PLAYGROUND_TEST_TAG": tag},
        start_new_session=True,
        preexec_fn=_controlling_tty if controlling else None,
    )
    os.close(slave)
    closed = False
    try:
        shown = read_pty(master, 120, until)
        assert until in shown, shown[-400:]
        if keys:
            os.write(master, keys)
            time.sleep(0.05)
        assert len(_ours(tag)) >= 2, "the app and its worker should both be running"
        os.close(master)
        closed = True
        if then is not None:
            time.sleep(0.1)
            if app.poll() is None:
                app.send_signal(then)
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and _ours(tag):
            time.sleep(0.1)
        left = _ours(tag)
        assert not left, f"still running 5 s after the terminal went away: {left}"
        assert app.wait(1) in (128 + signal.SIGHUP, 128 + (then or signal.SIGHUP))
    finally:
        for pid, _ in _ours(tag):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if app.poll() is None:
            app.kill()
        app.wait()
        if not closed:
            os.close(master)


#: The app on an engine whose close never returns and whose "worker" is a sleeping process:
#: a stop signal must still end both, by the deadline, whatever state the close is stuck in.
STUCK_APP = """\
import asyncio, subprocess, sys
sys.path.insert(0, sys.argv[2])
from tui_fakes import FakeEngine
from tui.factory import make_app


class StuckEngine(FakeEngine):
    def __init__(self):
        super().__init__()
        self.worker = subprocess.Popen(["sleep", "300"])
        self.gate = asyncio.Event()  # the run never finishes: a compile in progress

    async def close(self):
        await asyncio.Event().wait()

    def kill_now(self):
        self.worker.kill()
        self.worker.wait()


app = make_app(sys.argv[1], engine=StuckEngine(), watch=False)
app.run()
"""


@pytest.mark.parametrize("terminal", ["kept", "gone"])
def test_a_stop_signal_ends_the_app_even_when_its_close_is_stuck(tmp_path: Path, terminal: str):
    snippet = tmp_path / "branch.py"
    snippet.write_bytes((FIXTURES / "branch.py").read_bytes())
    tag = uuid.uuid4().hex
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    app = subprocess.Popen(
        [sys.executable, "-c", STUCK_APP, str(snippet), str(Path(__file__).parent)],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=tmp_path,
        env={**os.environ, "TERM": "xterm-256color", "PYTHONPATH": str(ROOT), "PLAYGROUND_TEST_TAG": tag},
        start_new_session=True,
    )
    os.close(slave)
    closed = False
    try:
        shown = read_pty(master, 60, b"compiling")
        assert b"compiling" in shown, shown[-400:]
        assert len(_ours(tag)) == 2
        if terminal == "gone":
            os.close(master)
            closed = True
        app.send_signal(signal.SIGTERM)
        start = time.monotonic()
        # A terminal reads all the time: so does this one, while the app is kept.
        tail = read_pty(master, 10, b"\x1b[?1049l\x1b[?25h") if terminal == "kept" else b""
        # Gone first, the hang-up may be what is noticed first: 128 + SIGHUP.
        codes = {128 + signal.SIGTERM} if terminal == "kept" else {128 + signal.SIGTERM, 128 + signal.SIGHUP}
        assert app.wait(10) in codes
        if terminal == "kept":  # given back even so: the alternate screen left, the mouse off
            assert b"\x1b[?1049l" in tail and b"\x1b[?1000l" in tail, tail[-200:]
        assert time.monotonic() - start < 6
        deadline = time.monotonic() + 2
        while time.monotonic() < deadline and _ours(tag):
            time.sleep(0.1)
        assert not _ours(tag)
    finally:
        for pid, _ in _ours(tag):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if app.poll() is None:
            app.kill()
        app.wait()
        if not closed:
            os.close(master)


def test_a_closed_input_ends_the_app(tmp_path: Path):
    """Input from a pipe whose other end closes (the terminal's output still there): end of
    input is a quit too (Textual's input thread had spun on the empty reads)."""
    snippet = tmp_path / "branch.py"
    snippet.write_bytes((FIXTURES / "branch.py").read_bytes())
    tag = uuid.uuid4().hex
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    read_end, write_end = os.pipe()
    app = subprocess.Popen(
        [sys.executable, "-m", "playground", str(snippet), "--backend", "eager"],
        stdin=read_end,
        stdout=slave,
        stderr=slave,
        cwd=tmp_path,
        env={**os.environ, "TERM": "xterm-256color", "PYTHONPATH": str(ROOT), "PLAYGROUND_TEST_TAG": tag},
        start_new_session=True,
    )
    os.close(slave)
    os.close(read_end)
    try:
        shown = read_pty(master, 120, b"done in")
        assert b"done in" in shown, shown[-400:]
        os.close(write_end)
        write_end = -1
        read_pty(master, 5, b"\x1b[?1049l")  # a terminal keeps reading
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and _ours(tag):
            time.sleep(0.1)
        assert not _ours(tag), _ours(tag)
        assert app.wait(1) == 128 + signal.SIGHUP
    finally:
        for pid, _ in _ours(tag):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if app.poll() is None:
            app.kill()
        app.wait()
        if write_end >= 0:
            os.close(write_end)
        os.close(master)
