"""The one place an app is built, used by the CLI and by the tests (which pass a fake engine)."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from playground.settings import Settings
from playground.snippet import literal_settings, read_regular_bytes
from tui.app import PlaygroundApp
from tui.engine import Engine


def initial_settings(snippet: Path, overrides: dict[str, Any] | None = None) -> Settings:
    """The snippet's SETTINGS, with the non-None `overrides` (CLI flags) on top."""
    try:
        text = read_regular_bytes(snippet).decode("utf-8", errors="replace")
    except OSError:
        text = ""
    given = {key: value for key, value in (overrides or {}).items() if value is not None}
    # Through from_dict, so CLI spellings ("auto", "default") are parsed like SETTINGS values.
    return Settings.from_dict({**literal_settings(text), **given})


def make_app(
    snippet_path: str | Path,
    *,
    engine: Engine,
    settings: Settings | None = None,
    watch: bool = True,
    clock: Callable[[], float] = time.monotonic,
    notice: str = "",
) -> PlaygroundApp:
    """The playground on `snippet_path`, driving `engine`.

    `settings` None means the snippet's own SETTINGS; `watch` False leaves the file watcher
    off (tests and snapshots trigger reruns themselves); `clock` is fixed in snapshots;
    `notice` is shown once the app is up (e.g. "opened your existing snippet.py").
    """
    path = Path(snippet_path).absolute()
    return PlaygroundApp(
        path,
        engine=engine,
        settings=settings if settings is not None else initial_settings(path),
        watch=watch,
        clock=clock,
        notice=notice,
    )
