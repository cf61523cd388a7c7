"""Watching one snippet file the way editors really save it. Torch-free.

Editors rarely write a file in place: vim and VS Code write a temporary file and rename it over
the original, `sed -i` does the same, some delete and recreate. So the watcher observes the
file's folder (a watch on the file itself would die with the first rename) and reacts to any
event that touches the file's name, as source or destination. A save that is complete (the
file closed after a write, or renamed into place) runs at once; other events wait for the burst
to settle (the debounce). The consumer re-reads the file and the newest content wins.

Symlinks: `link/snip.py` may be a link to a file elsewhere, or sit in a linked folder. Editing
the target never touches the link's own folder, so the folder of every hop (the link's and the
target's, as real paths) is watched, and an event matches when it names any hop. A module the
snippet imports from its folder (`from helper import SCALE`) reruns it too: any `*.py` beside
the snippet, or only the modules a run reported it imported, once one has.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.polling import PollingObserver

#: Links followed at most (the kernel's own limit is 40).
_MAX_HOPS = 40


class _Handler(FileSystemEventHandler):
    def __init__(self, watcher: SnippetWatcher) -> None:
        self.watcher = watcher

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type in ("opened", "closed_no_write"):
            return
        names = {os.fsdecode(event.src_path)}
        dest = getattr(event, "dest_path", "")
        if dest:
            names.add(os.fsdecode(dest))
        if any(self.watcher.matches(name) for name in names):
            # A file closed after writing, or renamed into place, is a save that is complete:
            # run now. Anything else (a write still open, a delete mid-save) waits for the burst.
            self.watcher.poke(now=event.event_type in ("closed", "moved"))


def _in_real_folder(path: Path) -> Path:
    """`path` with its folder made real (symlinks resolved) and its own name kept."""
    return Path(os.path.realpath(path.parent)) / path.name


def link_chain(path: Path) -> list[Path]:
    """`path` and every file it links to, in turn, each with a real folder; the last is the
    target (which may not exist yet, mid-save)."""
    hops = [_in_real_folder(path)]
    for _ in range(_MAX_HOPS):
        try:
            target = os.readlink(hops[-1])
        except OSError:
            break  # not a link (or gone): the end of the chain
        hops.append(_in_real_folder(hops[-1].parent / target))
    return hops


class SnippetWatcher:
    """Calls `on_change()` from a background thread once a burst of changes to `path` (or to a
    module it imports from its folder) settles for `debounce_s`. `poll=True` (or no inotify,
    e.g. on some network mounts) uses polling."""

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
        self._handler = _Handler(self)
        self._folders: set[Path] = set()
        #: None: any *.py beside the snippet counts; else exactly these (real paths).
        self._modules: frozenset[Path] | None = None
        self.mode = "none"

    # --- what counts as a change ---------------------------------------------------------------

    def names(self) -> set[Path]:
        """Every name the snippet goes by now (the link, each hop, the target), real folders."""
        return set(link_chain(self.path))

    def _snippet_folders(self) -> set[Path]:
        return {hop.parent for hop in self.names()}

    def watch_modules(self, modules: Iterable[str] | None) -> None:
        """Narrow the module trigger to `modules` (absolute paths a run imported, from the
        report's `local_modules`); None goes back to any *.py beside the snippet."""
        if modules is None:
            self._modules = None
            return
        self._modules = frozenset(Path(os.path.realpath(m)) for m in modules)
        self._schedule({m.parent for m in self._modules})

    def matches(self, name: str) -> bool:
        try:
            event_path = _in_real_folder(Path(name).absolute())
        except (OSError, ValueError):
            return False
        names = self.names()
        if event_path in names:
            self._schedule({hop.parent for hop in names})  # a retargeted link may point elsewhere now
            return True
        if event_path.suffix != ".py":
            return False
        modules = self._modules
        if modules is None:
            return event_path.parent in {hop.parent for hop in names}
        return event_path in modules or Path(os.path.realpath(event_path)) in modules

    # --- debouncing ------------------------------------------------------------------------------

    def poke(self, now: bool = False) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
            self._timer = threading.Timer(0.0 if now else self.debounce_s, self._fire)
            self._timer.daemon = True
            self._timer.start()

    def _fire(self) -> None:
        with self._lock:
            self._timer = None
        self.on_change()

    # --- the observer ----------------------------------------------------------------------------

    def _schedule(self, folders: set[Path]) -> None:
        """Watch each of `folders` not watched yet (each a real path, so a folder reached by
        two names is watched once). Called from the observer's thread too, which holds the
        observer's lock: so no lock of ours is held while calling into the observer."""
        with self._lock:
            observer = self._observer
            if observer is None:
                return
            new = {f for f in folders if f not in self._folders}
            self._folders |= new  # claimed: another thread will not schedule them again
        for folder in new:
            try:
                if folder.is_dir():
                    observer.schedule(self._handler, str(folder), recursive=False)
                    continue
            except OSError:
                pass  # gone, or out of inotify watches: the other folders still count
            with self._lock:
                self._folders.discard(folder)

    def start(self) -> None:
        if not self.poll:
            try:
                observer = Observer()
                self._start(observer)
                self.mode = "native"
                return
            except OSError:
                self._folders.clear()  # inotify unavailable or out of watches: fall back to polling
        self._start(PollingObserver(timeout=self.poll_interval_s))
        self.mode = "polling"

    def _start(self, observer: Any) -> None:
        folders = self._snippet_folders()
        first = Path(os.path.realpath(self.path.parent))
        # The snippet's own folder must be watchable (as before: an OSError here falls back to
        # polling); the other hops are added best-effort.
        observer.schedule(self._handler, str(first), recursive=False)
        self._folders = {first}
        observer.start()
        self._observer = observer
        self._schedule(folders)

    def stop(self) -> None:
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            observer, self._observer = self._observer, None
            self._folders = set()
        if observer is not None:
            observer.stop()
            observer.join(timeout=2)
