"""What is running on this machine, read from /proc: the tests' one way to say "nothing of ours
is left behind" (zombies, already dead and waiting to be reaped, do not count)."""

from __future__ import annotations

import os
import select
import time


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def is_live(pid: int) -> bool:
    """Running or sleeping, not a zombie and not gone."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def live_processes() -> list[tuple[int, str]]:
    """(pid, command line) of every live process."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and is_live(int(entry)):
            found.append((int(entry), cmdline(int(entry))))
    return found


def with_env(entry: str) -> list[tuple[int, str]]:
    """(pid, command line) of each live process whose environment holds `entry` ("KEY=VALUE"):
    a test's own mark, inherited by every process its command starts, sessions of their own too."""
    found = []
    for pid, cmd in live_processes():
        try:
            with open(f"/proc/{pid}/environ", "rb") as fh:
                if entry.encode() in fh.read().split(b"\0"):
                    found.append((pid, cmd))
        except OSError:
            continue
    return found


def any_running(pattern: str) -> bool:
    return any(pattern in cmd for _, cmd in live_processes())


def read_pty(fd: int, seconds: float, until: bytes = b"", *, poll_s: float = 0.1) -> bytes:
    """What a pty's master side gives within `seconds`, stopping early at `until` or when the
    program on the other side has gone (EIO, or end of file)."""
    out, end = b"", time.monotonic() + seconds
    while time.monotonic() < end:
        ready, _, _ = select.select([fd], [], [], poll_s)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the program has gone: EIO on the master side
                break
            if not chunk:
                break
            out += chunk
            if until and until in out:
                break
    return out
