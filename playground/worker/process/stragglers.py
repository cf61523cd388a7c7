"""What earlier runs left below the template (a Popen never waited on, Inductor's g++ of a
killed run), killed while the template waits on its file descriptors. Worker-side, torch-free."""

from __future__ import annotations

import contextlib
import os
import select
import tempfile
import time
from collections.abc import Callable, Collection

from playground.worker.process import procs

#: How long what a killed run left behind (Inductor's g++) may go on before it is killed too: a
#: compiler killed mid-write leaves a truncated .so in Inductor's on-disk cache ("file too short").
STRAGGLER_GRACE_S = 1.5


class Stragglers:
    """The sweep of the template's descendants, except those `keep()` names (the run in
    progress, the spare child), with a grace period for a compiler."""

    def __init__(self, keep: Callable[[], Collection[int]]) -> None:
        self.keep = keep
        self.deadline: float | None = None

    def select(self, fds: list[int], deadline: float | None) -> list[int]:
        """select() on `fds` until `deadline`, killing stragglers whose grace has run out."""
        while True:
            now = time.monotonic()
            limits = [d for d in (deadline, self.deadline) if d is not None]
            wait = max(min(limits) - now, 0.0) if limits else None
            readable, _, _ = select.select(fds, [], [], wait)
            if self.deadline is not None and time.monotonic() >= self.deadline:
                self.sweep()
            elif self.deadline is not None:
                self.sweep(grace=True)
            if readable or (deadline is not None and time.monotonic() >= deadline):
                return readable

    def sweep(self, grace: bool = False) -> None:
        """Kill whatever earlier runs left below us, except the run in progress. With `grace`,
        a compiler (Inductor's g++) is left to finish writing until STRAGGLER_GRACE_S: a
        compiler killed mid-write leaves a truncated .so in Inductor's on-disk cache."""
        left = procs.descendants(os.getpid(), exclude=set(self.keep()))
        if grace:
            compilers = [p for p in left if procs.is_compiler(p)]
            left = [p for p in left if p not in compilers]
            if compilers and self.deadline is None:
                self.deadline = time.monotonic() + STRAGGLER_GRACE_S
            elif not compilers:
                self.deadline = None
        else:
            self.deadline = None
        procs.kill_all(left)
        procs.reap(left)

    def settle(self, cache_dir: str | None = None) -> None:
        """Kill everything below us at once, a compiler too: the user is waiting to leave, and
        a compiler's grace (STRAGGLER_GRACE_S) is three times what quitting may take. What a
        killed compiler was writing inside Inductor's cache `cache_dir` (a truncated .so the
        next start would load: "file too short"), or in the temp folder under its own `cc*`
        names, is removed once it has ended."""
        left = procs.descendants(os.getpid(), exclude=set(self.keep()))
        outputs = [procs.compiler_output(p) for p in left if procs.is_compiler(p)]
        self.deadline = None
        procs.kill_all(left)
        procs.wait_gone(left, timeout=0.2)
        for path in outputs:
            if path is not None and _compilers_own(path, cache_dir):
                with contextlib.suppress(OSError):
                    os.remove(path)


def _compilers_own(path: str, cache_dir: str | None) -> bool:
    """Whether `path` is a file a killed compiler may be removed from: inside Inductor's cache,
    or one of gcc's own temporary files. Never a file of the user's."""
    real = os.path.realpath(path)
    if cache_dir and real.startswith(os.path.realpath(cache_dir) + os.sep):
        return True
    return os.path.dirname(real) == os.path.realpath(tempfile.gettempdir()) and os.path.basename(real).startswith("cc")
