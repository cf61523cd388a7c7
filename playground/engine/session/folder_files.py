"""Reading and writing the session folder's files: bounded regular-file reads, strict JSON, atomic writes
relative to a folder's descriptor, and whether a presenter's process still lives."""

from __future__ import annotations

import errno
import json
import math
import os
import re
import secrets
import stat
from pathlib import Path
from typing import Any

try:  # POSIX; elsewhere a second presenter is not refused (the folder's owner check still is)
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]


#: The format of the files; a reader refuses a session written in a newer one.
FORMAT = 1
PRESENTER = "presenter.json"
RUNS = "runs"
LOCK = ".presenter.lock"
_RUN_NAME = re.compile(r"^(\d{6,})\.json$")
_UNSAFE_NAME = re.compile(r"[^\w.-]+")
#: The most a follower reads of one run file: far above a real run (a 400 kB log makes a
#: 0.5 MB file) and far below what would hold a follower for seconds (a link to /dev/zero).
MAX_RUN_BYTES = 16 << 20
#: The most a follower reads of presenter.json (a few hundred bytes, a worker's hello some kB).
MAX_PRESENTER_BYTES = 1 << 20
#: How deep a session file's JSON may nest: a report nests a handful of levels; a file nested
#: thousands deep exhausts the recursion of the parser, or of whatever walks what it returns.
MAX_DEPTH = 32
#: The largest pid Linux gives (PID_MAX_LIMIT); a larger one is no process (and os.kill
#: raises OverflowError on one past a C int).
PID_MAX = 1 << 22
#: Times are seconds since the epoch; a larger one is no time a clock gave (and
#: time.localtime raises on one past year 9999).
_TIME_MAX = 2.0**37


class SessionFileError(ValueError):
    """A file in the session folder that is not what the writer writes."""


def read_bounded(path: Path | str, limit: int, *, dir_fd: int | None = None) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them: OSError for a FIFO, a
    device or a folder (opened non-blocking and checked on the open descriptor, so a FIFO never
    blocks and a swap in between cannot fool the check), SessionFileError for a larger file.
    With `dir_fd`, `path` is a name in that open folder, and a link there is not followed."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if dir_fd is not None:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags, dir_fd=dir_fd)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        if info.st_size > limit:
            raise SessionFileError(f"{info.st_size} bytes, over the {limit >> 20} MiB a session file may hold")
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise SessionFileError(f"grew over the {limit >> 20} MiB a session file may hold")
        return b"".join(chunks)
    finally:
        os.close(fd)


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise SessionFileError(f"the number {text[:24]} is out of range")
    return value


def _constant(name: str) -> Any:
    raise SessionFileError(f"{name} is not a number a session file holds")


def load_json(data: bytes) -> dict[str, Any]:
    """A session file's JSON object: no NaN or infinity (1e999 included), nested at most
    MAX_DEPTH deep; SessionFileError (a ValueError) otherwise."""
    try:
        value = json.loads(data, parse_float=_finite, parse_constant=_constant)
    except RecursionError:
        raise SessionFileError(f"nested deeper than the {MAX_DEPTH} levels a session file may") from None
    if not isinstance(value, dict):
        raise SessionFileError(f"a JSON {type(value).__name__}, not an object")
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise SessionFileError(f"nested deeper than the {MAX_DEPTH} levels a session file may")
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return value


def _int(value: Any, what: str, low: int = 0, high: int = 10**15) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise SessionFileError(f"{what} {str(value)[:24]!r} is not a whole number from {low} to {high}")
    return value


def _time(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= _TIME_MAX:
        raise SessionFileError(f"{what} {str(value)[:24]!r} is not a time")
    return float(value)


def _text_bytes(source: str) -> bytes:
    """The bytes a run's text stands for: UTF-8, with the undecodable bytes of the file that ran
    carried as surrogate escapes (how `source_that_ran` reads them)."""
    return source.encode("utf-8", "surrogateescape")


def _new_temp(folder: Path, name: str, mode: int) -> tuple[int, Path]:
    """A fresh hidden file in `folder` (O_EXCL: never an existing file or a planted link),
    created with `mode`, which the umask then narrows."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        tmp = folder / f".{name}.{secrets.token_hex(4)}.tmp"
        try:
            return os.open(tmp, flags, mode), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary name", str(folder))


def _write_at(folder_fd: int, name: str, data: bytes, mode: int = 0o644) -> None:
    """`write_atomically` relative to an open folder: the name is resolved in that folder, and
    whatever later happens to the path that led to it is not followed."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    for _ in range(100):
        tmp = f".{name}.{secrets.token_hex(4)}.tmp"
        try:
            fd = os.open(tmp, flags, 0o600, dir_fd=folder_fd)
            break
        except FileExistsError:
            continue
    else:
        raise FileExistsError(errno.EEXIST, "no free temporary name", name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            os.fchmod(handle.fileno(), mode)
        os.replace(tmp, name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)
    except BaseException:
        try:
            os.unlink(tmp, dir_fd=folder_fd)
        except OSError:
            pass
        raise


def _process_start(pid: int) -> str:
    """The kernel's start time of `pid` (field 22 of /proc/PID/stat), so a recycled pid is not
    taken for the presenter; "" where /proc cannot say."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat.rpartition(")")[2].split()[19] if ")" in stat else ""


def process_alive(pid: int, start: str = "") -> bool:
    """Whether `pid` still runs (another user's process counts), and is the same process."""
    if not 0 < pid <= PID_MAX:
        return False
    try:
        os.kill(pid, 0)
    except PermissionError:
        pass  # alive, someone else's
    except (OSError, OverflowError):
        return False
    return not start or not _process_start(pid) or _process_start(pid) == start
