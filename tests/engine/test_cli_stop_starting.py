"""`check` and `watch` stopped by SIGTERM or Ctrl-C while the worker is still starting (importing
torch, before its hello): the template cannot read a shutdown line then, and is sent SIGTERM at
once. The command exits 128 + the signal, within a second, and leaves no process: not the
worker, not one in the worker's session. (The same stops during a run: test_cli_hostile.)"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

SNIPPET = """\
import torch

def fn(x):
    return x + 1

def inputs():
    return [(torch.ones(2),)]
"""


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as fh:
            return [int(p) for p in fh.read().split()]
    except OSError:
        return []


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _in_session(session: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    stat = fh.read()
            except OSError:
                continue
            fields = stat[stat.rfind(b")") + 2 :].split()
            if int(fields[3]) == session and fields[0] != b"Z":
                found.append(int(entry))
    return found


@pytest.mark.parametrize("command", ["check", "watch"])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_stop_while_torch_starts_exits_at_once_and_leaves_nothing(tmp_path: Path, command: str, signum: int):
    path = tmp_path / "snippet.py"
    path.write_text(SNIPPET)
    extra = ["--json"] if command == "check" else ["--json-lines"]
    proc = subprocess.Popen(
        [sys.executable, "-m", "playground", command, str(path), *extra, "--backend", "eager"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    worker = None
    try:
        deadline = time.monotonic() + 60
        while worker is None and time.monotonic() < deadline:
            worker = next((p for p in _children(proc.pid) if "playground.worker" in _cmdline(p)), None)
            time.sleep(0.02)
        assert worker is not None, "no worker started"
        time.sleep(0.3)  # inside `import torch`: seconds on this machine
        stopped = time.monotonic()
        # Ctrl-C signals the foreground group; a timeout or `kill` the process.
        (os.kill if signum == signal.SIGTERM else os.killpg)(proc.pid, signum)
        _, stderr = proc.communicate(timeout=30)
        took = time.monotonic() - stopped
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 128 + signum, stderr.decode()[-2000:]
    assert b"Traceback" not in stderr, stderr.decode()[-2000:]
    assert _in_session(worker) == [], "the worker's session outlived the command"
    assert took < 1.0, f"{command} took {took:.2f} s to stop while torch was starting"
