"""The file watcher, as the app uses it: started per snippet, narrowed to the helpers a run imported."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from textual.app import App

from tui.engine.messages import SnippetChanged


class SnippetWatching:
    """Posts `SnippetChanged` to `app` when the snippet (or a helper it imports) is saved;
    does nothing when `enabled` is False (tests and snapshots trigger reruns themselves)."""

    def __init__(self, app: App[Any], *, enabled: bool) -> None:
        self.app = app
        self.enabled = enabled
        self._watcher: Any = None

    def start(self, snippet: Path) -> None:
        if not self.enabled:
            return
        try:
            from playground.engine.watch import SnippetWatcher
        except ImportError:
            self.app.notify("file watching unavailable: press r to rerun", severity="warning")
            return
        # post_message is thread-safe, and unlike call_from_thread it never blocks the
        # watcher thread on an app that is shutting down.
        self._watcher = SnippetWatcher(snippet, lambda: self.app.post_message(SnippetChanged()))
        self._watcher.start()

    def stop(self) -> None:
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None

    def follow(self, modules: Iterable[str] | None) -> None:
        """Watch the helpers the run imported; None: every .py beside the snippet."""
        if self._watcher is not None:
            self._watcher.watch_modules(modules)
