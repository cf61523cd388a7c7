"""The presenter's side: `SessionWriter` publishes each run and presenter.json, in the presenter's own
folder only, one presenter at a time."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from playground.engine.report import Report
from playground.engine.session.folder_files import (
    LOCK,
    MAX_PRESENTER_BYTES,
    PRESENTER,
    RUNS,
    _process_start,
    _text_bytes,
    _write_at,
    load_json,
    read_bounded,
)
from playground.engine.session.reader import run_numbers
from playground.engine.session.records import PresenterState, PublishedRun, this_host
from playground.engine.settings import Settings
from playground.engine.textsafe import one_line

try:  # POSIX; elsewhere a second presenter is not refused (the folder's owner check still is)
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]


class SessionError(OSError):
    """The session folder cannot be used (not ours to write, not a folder, a newer format)."""


def _user() -> str:
    try:
        import pwd

        return pwd.getpwuid(os.getuid()).pw_name
    except (ImportError, KeyError):
        return str(os.getuid())


def _open_folder(path: Path, *, follow: bool) -> int:
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
    return os.open(path, flags if follow else flags | getattr(os, "O_NOFOLLOW", 0))


def _refusal(fd: int, path: Path) -> str:
    """Why the presenter must not write into the folder open at `fd` ("" when it may): another
    user's folder (they could swap its files, or read what is written before it is meant to be
    read), or one every user may write to (anyone could plant a run in the presenter's name)."""
    info = os.fstat(fd)
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        return f"{path} belongs to another user (uid {info.st_uid}): present to a folder of your own"
    if info.st_mode & stat.S_IWOTH:
        return (
            f"{path} may be written by every user (mode {stat.S_IMODE(info.st_mode):04o}): "
            "anyone could put runs there in your name; chmod o-w it, or present to another folder"
        )
    return ""


class SessionWriter:
    """The presenter's end: `publish` each complete run, `update` what presenter.json says,
    `close` when the presenter leaves. A folder made here is readable by everyone who can reach
    it (0755, files 0644); a host restricts it with the folder above or a group (docs/workshop.md).

    The folder must be the presenter's own and not writable by every user; `runs/` is a real
    folder (never a link), and every write goes through descriptors opened once here, so a
    folder swapped for a link later is not written through either. One presenter at a time:
    a lock held while the writer lives refuses a second one (a killed presenter's lock goes
    with its process)."""

    def __init__(self, folder: str | Path, *, snippet_name: str = "") -> None:
        self.folder = Path(folder).absolute()
        self._fds: list[int] = []
        try:
            self._open()
        except SessionError:
            self._release()
            raise
        except OSError as exc:
            self._release()
            raise SessionError(f"cannot use {self.folder} as a session folder: {exc}") from exc
        # A session folder used again continues its numbering: followers keep their history.
        self.number = max(run_numbers(self.folder), default=0)
        pid = os.getpid()
        self.state = PresenterState(
            live=True,
            pid=pid,
            start=_process_start(pid),
            user=_user(),
            snippet_name=snippet_name,
            run=self.number,
            since=time.time(),
            host=this_host(),
        )
        self._write_state()

    def _open(self) -> None:
        if not self.folder.exists():
            self.folder.mkdir(parents=True)
            # Not the umask's choice: a folder made here is for followers to read. One the host
            # made beforehand keeps its permissions (a group, say).
            os.chmod(self.folder, 0o755)
        self._dir = _open_folder(self.folder, follow=True)
        self._fds.append(self._dir)
        why = _refusal(self._dir, self.folder)
        if why:
            raise SessionError(why)
        self._presenter_file_ours()
        try:
            os.mkdir(RUNS, 0o755, dir_fd=self._dir)
            made = True
        except FileExistsError:
            made = False
        try:
            self._runs = self._open_runs()
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                raise SessionError(f"{self.folder / RUNS} is not a folder (a link?): not written through") from exc
            raise
        self._fds.append(self._runs)
        if made:
            os.fchmod(self._runs, 0o755)
        why = _refusal(self._runs, self.folder / RUNS)
        if why:
            raise SessionError(why)
        if not os.access(self.folder / RUNS, os.W_OK):
            raise SessionError(f"cannot write to {self.folder / RUNS}")
        self._lock()

    def _presenter_file_ours(self) -> None:
        """Refuse a presenter.json that no session wrote: a folder presented to again goes on
        (its presenter.json is written anew), but a file of the user's by that name (or a link
        by that name) is never written over. Read through the folder's descriptor, as every
        write is."""
        path = self.folder / PRESENTER
        try:
            data = read_bounded(PRESENTER, MAX_PRESENTER_BYTES, dir_fd=self._dir)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise SessionError(f"cannot read {path}: {exc.strerror or exc}") from exc
        try:
            value = load_json(data)
            PresenterState.from_dict(value)
            ours = "format" in value
        except (ValueError, TypeError, AttributeError, KeyError):
            ours = False
        if not ours:
            raise SessionError(f"{path} is not a session's presenter file: not written over; present to another folder")

    def _open_runs(self) -> int:
        flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        return os.open(RUNS, flags, dir_fd=self._dir)

    def _lock(self) -> None:
        if fcntl is None:  # pragma: no cover
            return
        flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(LOCK, flags, 0o600, dir_fd=self._dir)
        self._fds.append(fd)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SessionError(
                f"{self.folder} already has a presenter{self._who()}; stop that one first, or present to another folder"
            ) from None

    def _who(self) -> str:
        try:
            state = PresenterState.from_dict(load_json(read_bounded(self.folder / PRESENTER, MAX_PRESENTER_BYTES)))
        except (OSError, ValueError, TypeError, AttributeError):
            return ""
        when = time.strftime("%H:%M", time.localtime(state.since)) if state.since else "?"
        return f" ({one_line(state.user) or 'someone'}, pid {state.pid}, since {when})"

    def _release(self) -> None:
        fds, self._fds = self._fds, []
        for fd in reversed(fds):
            try:
                os.close(fd)
            except OSError:
                pass

    def __del__(self) -> None:
        self._release()

    def _write_state(self) -> None:
        _write_at(self._dir, PRESENTER, json.dumps(self.state.to_dict()).encode())

    def publish(self, report: Report, source: str, settings: Settings, snippet_name: str) -> PublishedRun | None:
        """Write one complete run, then say in presenter.json that it is the newest. None, and
        nothing written, when `source` is not the text the report ran (its content_sha256;
        the file changed since, say): followers refuse such a run, and the next run follows.
        A report without a hash gets that of `source`."""
        if not self._fds:
            return None  # closed
        sha = hashlib.sha256(_text_bytes(source)).hexdigest()
        if report.content_sha256 and report.content_sha256 != sha:
            return None
        if not report.content_sha256:
            report = replace(report, content_sha256=sha)
        self.number += 1
        run = PublishedRun(self.number, report, source, settings, snippet_name, time.time())
        _write_at(self._runs, f"{run.number:06d}.json", json.dumps(run.to_dict()).encode())
        self.update(run=run.number, snippet_name=snippet_name)
        return run

    def update(self, **changes: Any) -> None:
        """Change what presenter.json says (pane, hello, snippet_name, run); a no-op when equal,
        and once closed."""
        state = replace(self.state, **changes)
        if state != self.state and self._fds:
            self.state = state
            self._write_state()

    def close(self) -> None:
        """The presenter leaves: followers say so and keep what they have; the folder is free
        for the next presenter."""
        try:
            if self.state.live:
                self.update(live=False, ended_at=time.time())
        finally:
            self._release()
