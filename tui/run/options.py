"""The session's options: what the command line (or a test) fixes for every run of one app,
made once by `tui.factory.make_app` and handed whole to the app and its pipeline."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from playground.engine.passes import NO_PASSES, Passes
from playground.engine.program import ProgramOptions
from playground.engine.run_request import DEFAULT_RUN_FLAGS, RunFlags
from playground.engine.session import SessionWriter


@dataclass(frozen=True)
class SessionOptions:
    """Everything but the snippet, the engine and the settings (which change as keys are
    pressed): each is fixed for the session."""

    watch: bool = True
    """The file watcher on (tests and snapshots leave it off and trigger reruns themselves)."""
    clock: Callable[[], float] = time.monotonic
    """The run's clock (fixed in snapshots)."""
    notice: str = ""
    """Shown once the app is up (e.g. "opened your existing snippet.py")."""
    pinned: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    """The command line's setting flags, already typed ({"dynamic": None} is --dynamic auto):
    they outlast a switch to another snippet, and a program's toggles start from them."""
    present: SessionWriter | None = None
    """A workshop session every complete run is published to (`--present`)."""
    passes: Passes = NO_PASSES
    """The passes asked of every run from the first (keys k, u and the Code pane ask later)."""
    run_flags: RunFlags = DEFAULT_RUN_FLAGS
    """What every run asks of the worker (--no-timing, --min-run-time)."""
    program: ProgramOptions = field(default_factory=ProgramOptions)
    """How a file that runs as a program runs (-- ARGS, bounds, --program, --callable)."""
    bisector: Callable[..., Any] | None = None
    """What `s` runs (torch's compiler bisector in its own process group; a fake in tests);
    None: the real one (`tui.screens.bisect.Bisector`'s shape)."""

    def __post_init__(self) -> None:
        # Frozen all the way down: a dict handed in is copied and made read-only.
        object.__setattr__(self, "pinned", MappingProxyType(dict(self.pinned)))
