"""Reading a snippet file on the client side, torch-free.

A run reads the bytes once (`prepare_run`, or the app's own read of the file it shows), hashes
them and sends that very text to the worker, so the SHA-256 in a report is always of the
content that ran, even if the file changes mid-run.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from playground.engine.report import Report, RunError
from playground.engine.settings import ResolvedSettings, Settings
from playground.engine.snippet_settings import resolve_settings, snippet_settings_error


class SnippetError(Exception):
    """The file cannot be run at all; `error` is the report's error object."""

    def __init__(self, exc_type: str, message: str, line: int | None = None, sha256: str | None = None) -> None:
        super().__init__(message)
        self.error = RunError(kind="snippet", type=exc_type, message=message, line=line)
        #: The SHA-256 of the bytes read, when the file could be read at all.
        self.sha256 = sha256


@dataclass(frozen=True)
class SnippetSource:
    """The snippet as read once for a run: its resolved path, its text (a BOM dropped) and the
    SHA-256 of its bytes on disk. The worker is sent this text, never the file's path to read."""

    path: str
    text: str
    sha256: str


def read_snippet(path: str | os.PathLike[str]) -> SnippetSource:
    """The file's text and the SHA-256 of its bytes, or a SnippetError saying why not."""
    return snippet_from_bytes(path, _read(Path(path)))


def _read(p: Path) -> bytes:
    try:
        return read_regular_bytes(p)
    except FileNotFoundError:
        raise SnippetError("FileNotFoundError", f"no such file: {p}") from None
    except IsADirectoryError:
        raise SnippetError("IsADirectoryError", f"{p} is a directory, not a snippet file") from None
    except NotARegularFile:
        raise SnippetError("NotARegularFile", f"{p} is not a regular file") from None
    except PermissionError:
        raise SnippetError("PermissionError", f"permission denied reading {p}") from None
    except OSError as exc:
        raise SnippetError(type(exc).__name__, f"cannot read {p}: {exc.strerror or exc}") from None


def snippet_from_bytes(path: str | os.PathLike[str], data: bytes) -> SnippetSource:
    """The snippet in `data`, the bytes just read from `path`; a SnippetError when it cannot
    run at all (empty, not UTF-8)."""
    p = Path(path)
    sha = hashlib.sha256(data).hexdigest()
    if not data.strip():
        raise SnippetError("EmptySnippet", f"{p.name} is empty: define `fn` or `model` and `inputs()`", None, sha)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise SnippetError(
            "UnicodeDecodeError",
            f"{p.name} is not UTF-8: byte 0x{data[exc.start]:02x} at line {line}",
            line,
            sha,
        ) from None
    # `python snippet.py` accepts a UTF-8 BOM (Windows Notepad writes one); compile() given the
    # decoded text does not, so it goes here. The SHA-256 stays that of the bytes on disk.
    return SnippetSource(path=str(p.resolve()), text=text.removeprefix("\ufeff"), sha256=sha)


@dataclass(frozen=True)
class PreparedRun:
    """One run as a front end prepares it, before it is sent: the snippet read once (`source`),
    the settings resolved once (defaults, the snippet's SETTINGS, the overrides) and, when they
    cannot be used, the settings error. The client sends `source` as it is: neither the file
    nor its SETTINGS is read again."""

    path: str
    settings: Settings
    error: RunError | None = None
    sha256: str | None = None
    #: The text that runs; None when the file could not be read or cannot run at all, and then
    #: `unreadable` says why.
    source: SnippetSource | None = None
    unreadable: RunError | None = None

    def refused_report(self) -> Report:
        """The report of a run refused for its settings: torch is never reached."""
        return Report(
            settings=self.settings, error=self.error, snippet=self.path, content_sha256=self.sha256 or "", wall_s=0.0
        )


def prepare_run(path: str | os.PathLike[str], overrides: dict[str, Any] | None = None) -> PreparedRun:
    """Read the snippet once and resolve its settings. A file that cannot be read gives the
    overrides on the defaults and no error here: the client reports why it cannot be read."""
    try:
        source = read_snippet(path)
    except SnippetError as exc:
        return unreadable_run(path, resolve_settings(None, overrides).settings, exc)
    return prepared_from(source, resolve_settings(source.text, overrides))


def prepared_from(source: SnippetSource, resolved: ResolvedSettings) -> PreparedRun:
    """The run of `source` under `resolved`, refused when they have a problem."""
    error = RunError.from_dict(resolved.error) if resolved.error is not None else None
    return PreparedRun(source.path, resolved.settings, error, source.sha256, source)


def prepared_as_given(path: str | os.PathLike[str], settings: Settings) -> PreparedRun:
    """The run of the file at `path` under `settings` as given (a matrix cell, a script's run):
    read once, here; its SETTINGS read only for their problems, which refuse it."""
    try:
        source = read_snippet(path)
    except SnippetError as exc:
        return unreadable_run(path, settings, exc)
    error = snippet_settings_error(source.text)
    return PreparedRun(source.path, settings, RunError.from_dict(error) if error else None, source.sha256, source)


def unreadable_run(path: str | os.PathLike[str], settings: Settings, exc: SnippetError) -> PreparedRun:
    """The run of a file that cannot run at all: its report says why, and no worker is needed."""
    return PreparedRun(str(Path(path).absolute()), settings, None, exc.sha256, None, exc.error)


_STACK_FRAME = re.compile(r'^\s*File "(?P<file>.*)", line (?P<line>\d+)', re.M)
_DUMP_START = re.compile(r"^(?:Fatal Python error|Timeout \(|Thread 0x|Current thread 0x)", re.M)


def snippet_line_in_stack(stderr_text: str, path: str) -> int | None:
    """The snippet's innermost line in the newest faulthandler dump that names one (most recent
    call first). The run's process and its eager reference (another process, running the same
    snippet) each dump before a timeout kills them; the one stuck in the snippet's own code, not
    in torch's compiler, is the one whose line says where."""
    starts = [m.start() for m in _DUMP_START.finditer(stderr_text)]
    if not starts:
        return _first_snippet_line(stderr_text, path)
    ends = [*starts[1:], len(stderr_text)]
    for start, end in reversed(list(zip(starts, ends))):
        line = _first_snippet_line(stderr_text[start:end], path)
        if line is not None:
            return line
    return None


def _first_snippet_line(block: str, path: str) -> int | None:
    names = _dumped_names(path)
    for match in _STACK_FRAME.finditer(block):
        if _same_file(match.group("file"), names):
            return int(match.group("line"))
    return None


def _dumped(name: str) -> str:
    """`name` as faulthandler writes it: non-ASCII and control characters escaped (\\xfc for ü)."""
    return "".join(ch if " " <= ch <= "~" else _escaped(ch) for ch in name)


def _escaped(ch: str) -> str:
    code = ord(ch)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def _dumped_names(path: str) -> set[str]:
    names = {path, os.path.abspath(path), os.path.realpath(path)}
    return names | {_dumped(name) for name in names}


def _same_file(dumped: str, names: set[str]) -> bool:
    if dumped in names:
        return True
    if dumped.endswith("...") and len(dumped) > 100:
        # faulthandler cuts names after 500 characters and appends "..."
        return any(name.startswith(dumped[:-3]) for name in names)
    try:
        return os.path.realpath(dumped) in names
    except (OSError, ValueError):
        return False


class NotARegularFile(OSError):
    """A FIFO, socket or device where a snippet file was expected."""


def read_regular_bytes(path: str | os.PathLike[str]) -> bytes:
    """The bytes of a regular file; OSError for anything else. A FIFO or device would block a
    plain open or read (and a UI thread or the watch loop must never block), so the file is
    opened non-blocking and its type checked on the open descriptor: a stat by name followed
    by an open would race with a save that swaps the file in between."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
        if not stat.S_ISREG(mode):
            raise NotARegularFile(errno.EINVAL, "not a regular file", str(path))
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
