"""The one place an app is built, used by the CLI and by the tests (which pass a fake engine)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from playground.engine.passes import NO_PASSES, Passes
from playground.engine.program import ProgramOptions
from playground.engine.run_request import DEFAULT_RUN_FLAGS, RunFlags
from playground.engine.session import SessionWriter
from playground.engine.settings import Settings
from playground.engine.snippet import read_regular_bytes
from playground.engine.snippet_settings import resolve_settings
from tui.app import PlaygroundApp
from tui.engine.protocol import Engine
from tui.run.options import SessionOptions
from tui.screens.bisect import Bisector


def initial_settings(snippet: Path, overrides: dict[str, Any] | None = None) -> Settings:
    """The settings the app opens with, resolved once: the snippet's SETTINGS, then `overrides`,
    the command line's flags as given and already typed ({"dynamic": None} is --dynamic auto).
    A bad SETTINGS is not reported here: the first run reports it as a settings error."""
    try:
        text = read_regular_bytes(snippet).decode("utf-8-sig", errors="replace")  # a BOM hides SETTINGS
    except OSError:
        text = ""
    return resolve_settings(text, overrides).settings


def make_app(
    snippet_path: str | Path,
    *,
    engine: Engine,
    settings: Settings | None = None,
    watch: bool = True,
    clock: Callable[[], float] = time.monotonic,
    notice: str = "",
    pinned: dict[str, Any] | None = None,
    present: SessionWriter | None = None,
    passes: Passes = NO_PASSES,
    run_flags: RunFlags = DEFAULT_RUN_FLAGS,
    program: ProgramOptions | None = None,
    bisector: Bisector | None = None,
) -> PlaygroundApp:
    """The playground on `snippet_path`, driving `engine`.

    `settings` None means the snippet's own SETTINGS; `watch` False leaves the file watcher
    off (tests and snapshots trigger reruns themselves); `clock` is fixed in snapshots;
    `notice` is shown once the app is up (e.g. "opened your existing snippet.py");
    `pinned` are the command line's setting flags, kept when another snippet is opened;
    `present` publishes every complete run to a workshop session that followers read;
    `passes` are asked of every run (keys k, 0 and u ask later); `run_flags` (--no-timing,
    --min-run-time) hold for every run; `program` (-- ARGS, --max-calls, --max-seconds,
    --program, --callable) holds for every run of a file that runs as a program; `bisector`
    is what `s` runs (torch's compiler bisector in its own process; a fake in tests).
    """
    path = Path(snippet_path).absolute()
    options = SessionOptions(
        watch=watch,
        clock=clock,
        notice=notice,
        pinned=pinned or {},
        present=present,
        passes=passes,
        run_flags=run_flags,
        program=program or ProgramOptions(),
        bisector=bisector,
    )
    return PlaygroundApp(
        path, engine=engine, settings=settings if settings is not None else initial_settings(path), options=options
    )
