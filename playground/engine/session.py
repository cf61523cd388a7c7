"""A workshop session: the presenter's runs, published to a folder that followers read.

The folder is the presenter's; its permissions are the only access control (no port, no
daemon): whoever may read it may follow. Its layout:

    SESSION/presenter.json        who presents, whether they still do, their newest run and pane
    SESSION/runs/000001.json      one file per complete run: the report, the source it ran,
                                  the settings, the snippet's name, when
    SESSION/.presenter.lock       held (flock) by the one presenter writing the folder

Every file is written whole to a hidden temporary name in the same folder and renamed over
its final name (rename is atomic within a file system), so a reader sees the old file or the
new one, never half of one. Torch-free and UI-free: the app, `watch` and the follower use it.

Everything a follower reads from the folder is someone else's input: a file is read only when
it is a regular file under a size cap (never a FIFO, a device or a link to one), parsed with
no NaN, no infinity and a bounded depth, and a run is taken only when its text is the text its
report's `content_sha256` names. A bad entry is a one-line problem, never a follower's crash.
"""

from __future__ import annotations

import errno
import hashlib
import json
import math
import os
import re
import secrets
import stat
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from playground.engine.report import Report
from playground.engine.settings import Settings, dynamic_name
from playground.engine.snippet import read_regular_bytes
from playground.engine.textsafe import one_line

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


def read_bounded(path: Path, limit: int) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them: OSError for a FIFO, a
    device or a folder (opened non-blocking and checked on the open descriptor, so a FIFO never
    blocks and a swap in between cannot fool the check), SessionFileError for a larger file."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
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


@dataclass(frozen=True)
class PublishedRun:
    """One run as the presenter saw it: its number in the session, the report, the source that
    ran, the settings it ran under, the snippet's file name, and when it was published."""

    number: int
    report: Report
    source: str
    settings: Settings
    snippet_name: str
    at: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "number": self.number,
            "at": self.at,
            "snippet_name": self.snippet_name,
            "settings": self.settings.to_dict(),
            "source": self.source,
            "report": self.report.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PublishedRun:
        """A run as the writer wrote it; SessionFileError (or the report's WireTypeError) for
        anything else: a session folder is another user's input."""
        if _int(data.get("format", 0), "format", high=10**6) > FORMAT:
            raise SessionFileError(f"written by a newer compile-playground (format {data.get('format')})")
        report, settings = data.get("report"), data.get("settings")
        if not isinstance(report, dict) or not isinstance(settings, (dict, type(None))):
            raise SessionFileError("no report")
        for key in ("source", "snippet_name"):
            if not isinstance(data.get(key, ""), str):
                raise SessionFileError(f"{key} is not text")
        return cls(
            number=_int(data.get("number"), "number", low=1),
            # Strict: a value of the wrong type is refused here rather than crash a pane later.
            report=Report.from_dict(report, strict=True),
            source=data.get("source", ""),
            settings=Settings.from_dict(settings),
            snippet_name=data.get("snippet_name", ""),
            at=_time(data.get("at", 0.0), "at"),
        )


@dataclass(frozen=True)
class PresenterState:
    """What presenter.json says: `live` until the presenter quits; `pid` and `start` let a
    follower tell a presenter that was killed; `run` is their newest run, `pane` the pane on
    their screen, `hello` their worker's handshake (torch version, cuda)."""

    live: bool = False
    pid: int = 0
    start: str = ""
    user: str = ""
    snippet_name: str = ""
    run: int = 0
    pane: str = ""
    hello: dict[str, Any] = field(default_factory=dict)
    since: float = 0.0
    ended_at: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "live": self.live,
            "pid": self.pid,
            "start": self.start,
            "user": self.user,
            "snippet_name": self.snippet_name,
            "run": self.run,
            "pane": self.pane,
            "hello": self.hello,
            "since": self.since,
            "ended_at": self.ended_at,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PresenterState:
        for key in ("start", "user", "snippet_name", "pane"):
            if not isinstance(data.get(key) or "", str):
                raise SessionFileError(f"{key} is not text")
        return cls(
            live=bool(data.get("live")),
            pid=_int(data.get("pid") or 0, "pid", high=2**63),  # past PID_MAX: a process gone
            start=str(data.get("start") or ""),
            user=str(data.get("user") or ""),
            snippet_name=str(data.get("snippet_name") or ""),
            run=_int(data.get("run") or 0, "run"),
            pane=str(data.get("pane") or ""),
            hello=dict(data.get("hello") or {}),
            since=_time(data.get("since") or 0.0, "since"),
            ended_at=None if data.get("ended_at") is None else _time(data["ended_at"], "ended_at"),
        )

    @property
    def present(self) -> bool:
        """Live, and the process that said so still runs (a killed presenter says nothing)."""
        return self.live and process_alive(self.pid, self.start)


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


def run_numbers(folder: Path) -> list[int]:
    """The numbers of the runs published in `folder`, unsorted; hidden temp files are not runs."""
    try:
        names = os.listdir(folder / RUNS)
    except OSError:
        return []
    return [int(m.group(1)) for name in names if (m := _RUN_NAME.match(name))]


@dataclass(frozen=True)
class SessionNews:
    """What changed since the last `poll`: runs not seen before (in order) and the presenter's
    state (None when presenter.json is missing or unreadable)."""

    runs: tuple[PublishedRun, ...]
    presenter: PresenterState | None
    problems: tuple[str, ...] = ()


class SessionReader:
    """The follower's end: `poll` returns the runs published since the previous poll, oldest
    first; the first poll returns every run so far (a follower who joins late catches up).
    Cheap when nothing changed: one read of presenter.json, which names the newest run (the
    writer writes the run first, then presenter.json), and no listing of the runs. A file that
    is not what a writer writes is skipped, with one line in `problems` saying why."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder).absolute()
        self.seen = 0
        self.presenter: PresenterState | None = None
        self._polled = False
        self._trouble = ""

    def _read_presenter(self) -> tuple[PresenterState | None, str]:
        """presenter.json's state, or None and why not ("" when there is no such file)."""
        try:
            data = read_bounded(self.folder / PRESENTER, MAX_PRESENTER_BYTES)
        except FileNotFoundError:
            return None, ""
        except OSError as exc:
            return None, f"presenter.json unreadable: {exc.strerror or exc}"
        try:
            return PresenterState.from_dict(load_json(data)), ""
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            return None, f"presenter.json ignored: {exc}"

    def _read_run(self, number: int) -> PublishedRun:
        run = PublishedRun.from_dict(load_json(read_bounded(self.folder / RUNS / f"{number:06d}.json", MAX_RUN_BYTES)))
        if run.number != number:
            raise SessionFileError(f"it says it is run {run.number}")
        if run.report.content_sha256 != hashlib.sha256(_text_bytes(run.source)).hexdigest():
            # What a fork would write and run must be what the presenter ran: never a text that
            # was changed (or never ran) under a report that vouches for another one.
            raise SessionFileError("its text is not the text that ran (content_sha256 differs)")
        return run

    def poll(self) -> SessionNews | None:
        """The news since the last call, or None when nothing changed."""
        presenter, trouble = self._read_presenter()
        quiet = presenter is not None and presenter == self.presenter and presenter.run <= self.seen
        if self._polled and quiet:
            return None
        runs: list[PublishedRun] = []
        problems: list[str] = [trouble] if trouble else []
        # A set: 000001.json and 0000001.json are one number, read once.
        numbers = sorted({n for n in run_numbers(self.folder) if n > self.seen})
        for number in numbers:
            try:
                runs.append(self._read_run(number))
            except FileNotFoundError:
                continue  # listed, then removed: nothing to say
            except OSError as exc:
                problems.append(f"run {number} skipped: {exc.strerror or exc}")
            except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
                # Never torn (written atomically), so this is a file someone else put there.
                problems.append(f"run {number} skipped: {exc}")
        if numbers:
            self.seen = numbers[-1]
        changed = not self._polled or runs or problems or presenter != self.presenter or trouble != self._trouble
        self._polled = True
        self.presenter, self._trouble = presenter, trouble
        if not changed:
            return None  # a presenter.json that names runs that never come: nothing new either
        return SessionNews(tuple(runs), presenter, tuple(one_line(p)[:200] for p in problems))


def source_that_ran(path: Path, content_sha256: str, fallback: str = "") -> str:
    """The text of the file at `path` when it still holds the bytes a run executed (by their
    hash), else `fallback`: a fork must get the bytes that ran, not a screen's escaped copy.
    Decoded so that it encodes back to those very bytes (a BOM kept, a stray byte carried as a
    surrogate escape): followers check the text against the hash."""
    try:
        data = read_regular_bytes(path)
    except OSError:
        return fallback
    if hashlib.sha256(data).hexdigest() != content_sha256:
        return fallback
    return data.decode("utf-8", errors="surrogateescape")


def setting_flags(settings: Settings) -> list[str]:
    """The command line's setting flags that give exactly `settings` whatever the snippet's
    SETTINGS say: how a fork opens the attendee's playground with the presenter's settings.
    Each value is glued to its flag (`--backend=VALUE`): a value comes from the session folder,
    and one that reads like an option (`--present=DIR`) must stay that flag's value."""
    flags = ["--fullgraph" if settings.fullgraph else "--no-fullgraph"]
    flags += [f"--dynamic={dynamic_name(settings.dynamic)}", f"--backend={settings.backend}"]
    flags += [f"--mode={settings.mode or 'default'}", f"--device={settings.device}"]
    if settings.cold:
        flags.append("--cold")
    for key, value in settings.config:
        flags.append(f"--config={key}={json.dumps(_plain(value))}")
    flags.append(f"--stance={settings.stance}")
    if settings.error_on_graph_break:
        flags.append("--error-on-graph-break")
    return flags


def _plain(value: Any) -> Any:
    return [_plain(v) for v in value] if isinstance(value, tuple) else value


def fork_path(directory: Path, snippet_name: str, number: int) -> Path:
    """Where a fork of run `number` of `snippet_name` goes first: `<stem>-run<number>.py`. The
    name is the presenter's: letters, digits, `_`, `.` and `-` are kept (no leading `-` or `.`,
    so never an option or a hidden file), anything else becomes `_`."""
    stem = _UNSAFE_NAME.sub("_", Path(snippet_name.replace("\\", "/")).stem).lstrip("-.")[:80] or "snippet"
    return directory / f"{stem}-run{number}.py"


def write_new_file(dest: Path, data: bytes) -> Path:
    """Write `data` to `dest`, or to `dest` with -2, -3… added when that exists: never over an
    existing file, never a torn one (a temp file, then a hard link, which fails if the name
    was taken in between). The file's mode is the umask's, as any new file of the user's. The
    path written."""
    stem, suffix = dest.stem, dest.suffix
    fd, tmp = _new_temp(dest.parent, dest.name, 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        for attempt in range(1, 1000):
            candidate = dest if attempt == 1 else dest.with_name(f"{stem}-{attempt}{suffix}")
            try:
                os.link(tmp, candidate)
            except FileExistsError:
                continue
            return candidate
        raise FileExistsError(f"no free name beside {dest}")
    finally:
        tmp.unlink(missing_ok=True)
