"""The app in a real pseudo-terminal, ended by a signal: it quits as `q` does, gives the terminal
back (the alternate screen left, the mouse no longer reported), exits 128 + the signal, and
leaves no process of its own. SIGTERM's default action had ended it mid-frame, the terminal
left unusable until `reset`."""

from __future__ import annotations

import fcntl
import os
import signal
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest
from tui_fakes import FIXTURES

from tests.processes import read_pty

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=["SIGTERM", "SIGHUP", "SIGINT"])
def test_a_stop_signal_gives_the_terminal_back(tmp_path: Path, signum: int):
    snippet = tmp_path / "branch.py"
    snippet.write_bytes((FIXTURES / "branch.py").read_bytes())
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    app = subprocess.Popen(
        [sys.executable, "-m", "playground", str(snippet), "--backend", "eager"],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=tmp_path,
        env={**os.environ, "TERM": "xterm-256color", "PYTHONPATH": str(ROOT)},
        start_new_session=True,
    )
    os.close(slave)
    try:
        shown = read_pty(master, 120, until=b"done in")
        assert b"done in" in shown, shown[-400:]
        app.send_signal(signum)
        tail = read_pty(master, 30)
        assert app.wait(30) == 128 + signum
        assert b"\x1b[?1049l" in tail  # the alternate screen left
        assert b"\x1b[?1000l" in tail  # the mouse no longer reported
    finally:
        if app.poll() is None:
            os.killpg(app.pid, signal.SIGKILL)
            app.wait()
        os.close(master)
