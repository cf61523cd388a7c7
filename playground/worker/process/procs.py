"""Process bookkeeping for the worker on Linux: the process tree under a pid, and the prctl
switches that keep it from outliving us. Torch-free and dependency-free (no psutil).

Everything here degrades to a no-op where /proc or prctl is missing (macOS): the process group
the client kills is then the only net.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
import signal
import time
from typing import Any

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def _prctl(option: int, value: int) -> bool:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def die_with_parent(sig: int = signal.SIGKILL) -> bool:
    """Ask the kernel to send `sig` to this process when its parent dies."""
    return _prctl(PR_SET_PDEATHSIG, int(sig))


def forked_from(parent: int) -> None:
    """A forked child's first steps: it dies with the template (and leaves at once where the
    template died between the fork and this call), and the signals the template handles are
    the kernel's defaults again, so that a kill ends it."""
    die_with_parent(signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def become_subreaper() -> bool:
    """Orphans below this process are re-parented to it instead of to init, so that a child
    started with start_new_session=True (which leaves our process group) can still be found
    and killed."""
    return _prctl(PR_SET_CHILD_SUBREAPER, 1)


def _parent_map() -> dict[int, int]:
    parents: dict[int, int] = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return parents
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        # The command name is in parentheses and may hold spaces or parentheses itself.
        fields = stat[stat.rfind(b")") + 2 :].split()
        with contextlib.suppress(IndexError, ValueError):
            parents[int(entry)] = int(fields[1])
    return parents


def descendants(pid: int, exclude: frozenset[int] | set[int] = frozenset()) -> list[int]:
    """Every process below `pid` (children first), leaving out the subtrees of `exclude`."""
    children: dict[int, list[int]] = {}
    for child, parent in _parent_map().items():
        children.setdefault(parent, []).append(child)
    found: list[int] = []
    stack = [c for c in children.get(pid, []) if c not in exclude]
    while stack:
        p = stack.pop()
        found.append(p)
        stack.extend(c for c in children.get(p, []) if c not in exclude)
    return found


#: The processes of a C/C++ build: Inductor's g++ and what it runs.
_COMPILERS = frozenset(
    {"g++", "gcc", "c++", "cc", "cc1", "cc1plus", "as", "ld", "collect2", "clang", "clang++", "nvcc"}
)


def is_compiler(pid: int) -> bool:
    """Whether `pid` is part of a C/C++ build, which is given a moment to finish writing."""
    try:
        with open(f"/proc/{pid}/comm") as fh:
            return fh.read().strip() in _COMPILERS
    except OSError:
        return False


def kill_all(pids: list[int], sig: int = signal.SIGKILL) -> None:
    for p in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(p, sig)


def reap(pids: list[int]) -> None:
    """Collect the exit status of those that are our children (zombies otherwise)."""
    for p in pids:
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(p, os.WNOHANG)


def compiler_output(pid: int) -> str | None:
    """The file a compiler process writes (its `-o`), as an absolute path; None when it names none
    or is gone. Read before it is killed: a compiler killed mid-write leaves that file truncated."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            argv = fh.read().split(b"\0")
        cwd = os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return None
    for flag, value in zip(argv, argv[1:]):
        if flag == b"-o" and value:
            return os.path.join(cwd, os.fsdecode(value))
    return None


def wait_gone(pids: list[int], timeout: float) -> None:
    """Until every one of `pids` has ended (reaped, or no longer in /proc), at most `timeout` s."""
    deadline = time.monotonic() + timeout
    left = list(pids)
    while left and time.monotonic() < deadline:
        reap(left)
        left = [p for p in left if os.path.exists(f"/proc/{p}") and not _is_zombie(p)]
        if left:
            time.sleep(0.005)


def _is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return True
    return stat[stat.rfind(b")") + 2 :][:1] == b"Z"


def ended(pid: int, killed_for: str, dumping: bool = False) -> tuple[str, dict[str, Any]]:
    """Reap the run's child: the outcome ("ok", "died", or why we killed it) and its status.
    `dumping`: it ended after its timeout's stack dump began, where a fault is the dump's
    (child.dump_after), and the run's outcome is the timeout it was about to have."""
    _, wait_status = os.waitpid(pid, 0)
    status: dict[str, Any] = {"pid": pid}
    if os.WIFSIGNALED(wait_status):
        status["signal"] = signal.Signals(os.WTERMSIG(wait_status)).name
    else:
        status["returncode"] = os.WEXITSTATUS(wait_status)
    if killed_for:
        return killed_for, status
    if dumping and status.get("signal") in ("SIGSEGV", "SIGBUS"):
        return "timeout", status
    return ("ok" if status.get("returncode") == 0 else "died"), status
