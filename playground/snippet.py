"""Reading a snippet file on the client side, torch-free.

The client reads the bytes once, hashes them and sends that very text to the worker, so the
SHA-256 in a report is always of the content that ran, even if the file changes mid-run.
"""

from __future__ import annotations

import ast
import errno
import hashlib
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class SnippetError(Exception):
    """The file cannot be run at all; `error` is the report's error object."""

    def __init__(self, exc_type: str, message: str, line: int | None = None, sha256: str | None = None) -> None:
        super().__init__(message)
        self.error = {"kind": "snippet", "type": exc_type, "message": message, "line": line, "detail": ""}
        #: The SHA-256 of the bytes read, when the file could be read at all.
        self.sha256 = sha256


@dataclass(frozen=True)
class SnippetSource:
    path: str
    text: str
    sha256: str


def read_snippet(path: str | os.PathLike[str]) -> SnippetSource:
    """The file's text and the SHA-256 of its bytes, or a SnippetError saying why not."""
    p = Path(path)
    try:
        data = read_regular_bytes(p)
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
    return SnippetSource(path=str(p.resolve()), text=text, sha256=sha)


def sha256_of(path: str | os.PathLike[str]) -> str | None:
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


def literal_settings(text: str) -> dict[str, Any]:
    """The snippet's module-level SETTINGS dict, read without running the snippet (the UI
    needs its initial toggles before the worker has torch). Empty when absent or not literal."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return {}
    for node in tree.body:
        targets = []
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets = [node.target]
        if any(isinstance(t, ast.Name) and t.id == "SETTINGS" for t in targets):
            try:
                value = ast.literal_eval(node.value)
            except (ValueError, SyntaxError, TypeError):
                return {}
            return value if isinstance(value, dict) else {}
    return {}


_STACK_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')
_DUMP_START = re.compile(r"^(?:Fatal Python error|Timeout \(|Thread 0x|Current thread 0x)", re.M)


def snippet_line_in_stack(stderr_text: str, path: str) -> int | None:
    """The snippet's innermost line in the last faulthandler dump (most recent call first)."""
    starts = [m.start() for m in _DUMP_START.finditer(stderr_text)]
    block = stderr_text[starts[-1] :] if starts else stderr_text
    # faulthandler prints "Fatal Python error" then "Current thread": take from the last header group.
    if len(starts) >= 2 and stderr_text[starts[-2] :].startswith("Fatal Python error"):
        block = stderr_text[starts[-2] :]
    target = os.path.realpath(path)
    for match in _STACK_FRAME.finditer(block):
        if os.path.realpath(match.group("file")) == target:
            return int(match.group("line"))
    return None


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
