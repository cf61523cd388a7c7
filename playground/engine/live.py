"""The live-run loop's logic, shared by `watch` and the app: the newest save wins.

Runs are numbered (generations). Each save or setting makes whatever is in flight stale (the
caller cancels it); only the newest generation's events change what is shown, so a result made
stale by a newer save is never presented as current. A request for what was asked last (same
bytes, settings and helper modules) may be dropped: an editor's second write of the same bytes
has nothing new to teach. After a run, the modules it imported from beside the snippet (its
helpers) are what else to watch. Each run's snippet is read once, with its settings, into the
`RunRequest` that travels to the client.

Torch-free and textual-free: `watch` drives it from an asyncio loop, the app from Textual
workers, which post messages and never block the UI.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from playground.engine.report import Report
from playground.engine.run_request import RunRequest
from playground.engine.settings import Settings
from playground.engine.snippet import read_regular_bytes


@dataclass(frozen=True)
class LiveRun:
    """One run of the loop: its generation, and the request made for it (the snippet as read
    for it with its settings, the session's flags, the passes, whether it asks for torch's
    structured trace)."""

    generation: int
    #: The file as the front end names it (the request's path is the resolved one).
    path: Path
    request: RunRequest

    @property
    def settings(self) -> Settings:
        return self.request.settings


class LiveRuns:
    """The generation counter, the last request asked for, the trace run waited on, and the
    snippet's helper modules whose edits rerun it too."""

    def __init__(self) -> None:
        self._generation = 0
        self._requested: tuple[str, Settings, str] | None = None
        self._trace_generation: int | None = None
        #: The modules the last good run imported from outside Python and installed packages (its
        #: helpers): an edit to one of them reruns the snippet, whose own bytes did not change.
        self._local_modules: tuple[str, ...] = ()

    @property
    def generation(self) -> int:
        """The newest run's number; messages of any other are stale."""
        return self._generation

    def is_current(self, generation: int) -> bool:
        return generation == self._generation

    def supersede(self) -> bool:
        """Make whatever is in flight stale. True when a trace run asked for is lost with it."""
        self._generation += 1
        lost = self._trace_generation is not None
        self._trace_generation = None
        return lost

    def forget(self) -> None:
        """The next request must run, even for unchanged bytes and settings."""
        self._requested = None

    def wanted(self, source_sha: str, settings: Settings, *, force: bool) -> bool:
        """Whether a request for these bytes and settings runs; remembered when it does."""
        key = (source_sha, settings, self._modules_digest())
        if not force and key == self._requested:
            return False
        self._requested = key
        return True

    def expect_trace(self) -> None:
        """The current generation is a trace run: its result writes torch's trace."""
        self._trace_generation = self._generation

    def take_trace(self, generation: int) -> bool:
        """Whether `generation` is the trace run waited on (then no longer waited on)."""
        if generation != self._trace_generation:
            return False
        self._trace_generation = None
        return True

    def follow(self, report: Report) -> tuple[str, ...] | None:
        """Remember the helpers a good run imported; the modules to watch, None after a failed
        run (the caller then watches every .py beside the snippet: a helper with a syntax
        error is never imported, and may be the fix)."""
        modules = report.local_modules if report.error is None else None
        self._local_modules = tuple(modules or ())
        if modules is None:
            self._requested = None  # whatever changes next must run
        return modules

    def _modules_digest(self) -> str:
        digest = hashlib.sha256()
        for name in self._local_modules:
            try:
                digest.update(read_regular_bytes(name))
            except OSError:
                digest.update(b"\0missing")
        return digest.hexdigest()
