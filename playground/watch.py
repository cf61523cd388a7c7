"""Watching one snippet file the way editors really save it. Torch-free.

Editors rarely write a file in place: vim and VS Code write a temporary file and rename it over
the original, `sed -i` does the same, some delete and recreate. So the watcher observes the
file's folder (a watch on the file itself would die with the first rename) and reacts to any
event that touches the file's name, as source or destination. Bursts are debounced; the
consumer re-reads the file and the newest content wins.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.polling import PollingObserver


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: SnippetWatcher) -> None:
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return
        names = {os.fspath(event.src_path)}
        dest = getattr(event, "dest_path", "")
        if dest:
            names.add(os.fspath(dest))
        if any(self.watcher.matches(name) for name in names):
            self.watcher.poke()


class SnippetWatcher:
    """Calls `on_change()` from a background thread once a burst of changes to `path` settles
    for `debounce_s`. `poll=True` (or no inotify, e.g. on some network mounts) uses polling."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        on_change: Callable[[], None],
        *,
        debounce_s: float = 0.05,
        poll: bool = False,
        poll_interval_s: float = 0.25,
    ) -> None:
        self.path = Path(path).absolute()
        self.on_change = on_change
        self.debounce_s = debounce_s
        self.poll = poll
        self.poll_interval_s = poll_interval_s
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()
        self._observer: Any = None
        self.mode = "none"

    def matches(self, name: str) -> bool:
        try:
            return Path(name).absolute() == self.path
        except (OSError, ValueError):
            return False

    def poke(self) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = threading.Timer(self.debounce_s, self._fire)
            self._timer.daemon = True
            self._timer.start()

    def _fire(self) -> None:
        with self._lock:
            self._timer = None
        self.on_change()

    def start(self) -> None:
        folder = str(self.path.parent)
        if not self.poll:
            try:
                observer = Observer()
                observer.schedule(_Handler(self), folder, recursive=False)
                observer.start()
                self._observer = observer
                self.mode = "native"
                return
            except OSError:
                pass  # inotify unavailable or out of watches: fall back to polling
        observer = PollingObserver(timeout=self.poll_interval_s)
        observer.schedule(_Handler(self), folder, recursive=False)
        observer.start()
        self._observer = observer
        self.mode = "polling"

    def stop(self) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
        if self._observer is not None:
            self._observer.stop()
            self._observer.join(timeout=2)
            self._observer = None
