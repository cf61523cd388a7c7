"""What earlier runs left below the template (a Popen never waited on, Inductor's g++ of a
killed run), killed while the template waits on its file descriptors. Worker-side, torch-free."""

from __future__ import annotations

import os
import select
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

    def settle(self) -> None:
        """Let a compiler in its grace finish (or run out of time), then kill the rest."""
        self.sweep(grace=True)
        while self.deadline is not None and time.monotonic() < self.deadline:
            time.sleep(0.05)
            self.sweep(grace=True)
        self.sweep()
