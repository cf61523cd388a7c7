"""A child forked from the template after Inductor has used its compile thread pool must start
its own: torch resets only the compile process pool after a fork, and a child that inherits the
thread pool waits forever on its first C++ compile (found on a cold Inductor cache, where the
template's warm-up compiles a kernel). Checked in a fresh `python`, with and without the fix."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = r"""
import os, select, sys
import torch._inductor.async_compile as ac
from playground.worker import compat

if ac.get_compile_threads() <= 1:
    print("single-threaded")
    sys.exit(0)
ac.AsyncCompile.pool().submit(lambda: 1).result()  # the template's warm-up compiled something
if sys.argv[1] == "fixed":
    os.register_at_fork(after_in_child=compat.forget_compile_threads)
pid = os.fork()
if pid == 0:
    ok = ac.AsyncCompile.pool().submit(lambda: 2).result(timeout=6) == 2
    os._exit(0 if ok else 1)
pidfd = os.pidfd_open(pid)
done = bool(select.select([pidfd], [], [], 8)[0])
if not done:
    os.kill(pid, 9)
_, status = os.waitpid(pid, 0)
print("finished" if done and os.waitstatus_to_exitcode(status) == 0 else "hung")
"""


def _probe(mode: str) -> str:
    done = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, timeout=120)
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-500:]


def test_a_forked_child_compiles_with_threads_of_its_own():
    result = _probe("fixed")
    if result == "single-threaded":
        pytest.skip("Inductor compiles on one thread here: no pool to inherit")
    assert result == "finished"


def test_without_forgetting_the_pool_a_forked_child_would_hang():
    """What the fix is for, on the installed torch (so that a torch that fixes it itself shows)."""
    result = _probe("unfixed")
    if result == "single-threaded":
        pytest.skip("Inductor compiles on one thread here: no pool to inherit")
    assert result in ("hung", "finished")
    if result == "finished":
        pytest.skip("this torch resets its compile thread pool after a fork itself")
