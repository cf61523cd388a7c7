"""A workshop session: the presenter's runs, published to a folder that followers read.

The folder is the presenter's; its permissions are the only access control (no port, no
daemon): whoever may read it may follow. Its layout:

    SESSION/presenter.json        who presents, whether they still do, their newest run and pane
    SESSION/runs/000001.json      one file per complete run: the report, the source it ran,
                                  the settings, the snippet's name, when

Every file is written whole to a hidden temporary name in the same folder and renamed over
its final name (rename is atomic within a file system), so a reader sees the old file or the
new one, never half of one. Torch-free and UI-free: the app, `watch` and the follower use it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from playground.engine.hello import WorkerHello
from playground.engine.report import Report
from playground.engine.settings import Settings, dynamic_name
from playground.engine.snippet import read_regular_bytes

#: The format of the files; a reader refuses a session written in a newer one.
FORMAT = 1
PRESENTER = "presenter.json"
RUNS = "runs"
_RUN_NAME = re.compile(r"^(\d{6,})\.json$")


def write_atomically(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Write `data` to `path` so that a reader never sees a torn file: a hidden temp file in the
    same folder, then a rename over `path`."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, mode)  # mkstemp makes 0600: followers must be able to read it
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
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
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # alive, someone else's
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
        if int(data.get("format", 0)) > FORMAT:
            raise ValueError(f"written by a newer compile-playground (format {data.get('format')})")
        return cls(
            number=int(data["number"]),
            report=Report.from_dict(data["report"]),
            source=str(data.get("source", "")),
            settings=Settings.from_dict(data.get("settings")),
            snippet_name=str(data.get("snippet_name", "")),
            at=float(data.get("at", 0.0)),
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
    hello: WorkerHello | None = None
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
            "hello": self.hello.to_dict() if self.hello is not None else {},
            "since": self.since,
            "ended_at": self.ended_at,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PresenterState:
        return cls(
            live=bool(data.get("live")),
            pid=int(data.get("pid") or 0),
            start=str(data.get("start") or ""),
            user=str(data.get("user") or ""),
            snippet_name=str(data.get("snippet_name") or ""),
            run=int(data.get("run") or 0),
            pane=str(data.get("pane") or ""),
            hello=WorkerHello.from_dict(data["hello"]) if data.get("hello") else None,
            since=float(data.get("since") or 0.0),
            ended_at=None if data.get("ended_at") is None else float(data["ended_at"]),
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


class SessionWriter:
    """The presenter's end: `publish` each complete run, `update` what presenter.json says,
    `close` when the presenter leaves. A folder made here is readable by everyone who can reach
    it (0755, files 0644); a host restricts it with the folder above or a group (docs/workshop.md)."""

    def __init__(self, folder: str | Path, *, snippet_name: str = "") -> None:
        self.folder = Path(folder).absolute()
        try:
            for folder in (self.folder, self.folder / RUNS):
                if not folder.exists():
                    folder.mkdir(parents=True)
                    # Not the umask's choice: a folder made here is for followers to read. One
                    # the host made beforehand keeps its permissions (a group, say).
                    os.chmod(folder, 0o755)
        except OSError as exc:
            raise SessionError(f"cannot use {self.folder} as a session folder: {exc}") from exc
        if not os.access(self.folder / RUNS, os.W_OK):
            raise SessionError(f"cannot write to {self.folder / RUNS}")
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

    def _write_state(self) -> None:
        write_atomically(self.folder / PRESENTER, json.dumps(self.state.to_dict()).encode())

    def publish(self, report: Report, source: str, settings: Settings, snippet_name: str) -> PublishedRun:
        """Write one complete run, then say in presenter.json that it is the newest."""
        self.number += 1
        run = PublishedRun(self.number, report, source, settings, snippet_name, time.time())
        write_atomically(self.folder / RUNS / f"{run.number:06d}.json", json.dumps(run.to_dict()).encode())
        self.update(run=run.number, snippet_name=snippet_name)
        return run

    def update(self, **changes: Any) -> None:
        """Change what presenter.json says (pane, hello, snippet_name, run); a no-op when equal."""
        state = replace(self.state, **changes)
        if state != self.state:
            self.state = state
            self._write_state()

    def close(self) -> None:
        """The presenter leaves: followers say so and keep what they have."""
        if self.state.live:
            self.update(live=False, ended_at=time.time())


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
    writer writes the run first, then presenter.json), and no listing of the runs."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder).absolute()
        self.seen = 0
        self.presenter: PresenterState | None = None
        self._polled = False

    def _read_presenter(self) -> PresenterState | None:
        try:
            return PresenterState.from_dict(json.loads((self.folder / PRESENTER).read_bytes()))
        except (OSError, ValueError, TypeError, AttributeError):
            return None

    def poll(self) -> SessionNews | None:
        """The news since the last call, or None when nothing changed."""
        presenter = self._read_presenter()
        quiet = presenter is not None and presenter == self.presenter and presenter.run <= self.seen
        if self._polled and quiet:
            return None
        self._polled = True
        self.presenter = presenter
        runs: list[PublishedRun] = []
        problems: list[str] = []
        numbers = sorted(n for n in run_numbers(self.folder) if n > self.seen)
        for number in numbers:
            path = self.folder / RUNS / f"{number:06d}.json"
            try:
                runs.append(PublishedRun.from_dict(json.loads(path.read_bytes())))
            except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
                # Never torn (written atomically), so this is a file someone else put there.
                problems.append(f"run {number} unreadable: {exc}")
        if numbers:
            self.seen = numbers[-1]
        return SessionNews(tuple(runs), presenter, tuple(problems))


def source_that_ran(path: Path, content_sha256: str, fallback: str = "") -> str:
    """The text of the file at `path` when it still holds the bytes a run executed (by their
    hash), else `fallback`: a fork must get the bytes that ran, not a screen's escaped copy."""
    try:
        data = read_regular_bytes(path)
    except OSError:
        return fallback
    if hashlib.sha256(data).hexdigest() != content_sha256:
        return fallback
    return data.decode("utf-8-sig", errors="replace")


def setting_flags(settings: Settings) -> list[str]:
    """The command line's setting flags that give exactly `settings` whatever the snippet's
    SETTINGS say: how a fork opens the attendee's playground with the presenter's settings."""
    flags = ["--fullgraph" if settings.fullgraph else "--no-fullgraph"]
    flags += ["--dynamic", dynamic_name(settings.dynamic), "--backend", settings.backend]
    flags += ["--mode", settings.mode or "default", "--device", settings.device]
    if settings.cold:
        flags.append("--cold")
    for key, value in settings.config:
        flags += ["--config", f"{key}={json.dumps(_plain(value))}"]
    flags += ["--stance", settings.stance]
    if settings.error_on_graph_break:
        flags.append("--error-on-graph-break")
    return flags


def _plain(value: Any) -> Any:
    return [_plain(v) for v in value] if isinstance(value, tuple) else value


def fork_path(directory: Path, snippet_name: str, number: int) -> Path:
    """Where a fork of run `number` of `snippet_name` goes first: `<stem>-run<number>.py`."""
    stem = Path(snippet_name).stem or "snippet"
    return directory / f"{stem}-run{number}.py"


def write_new_file(dest: Path, data: bytes) -> Path:
    """Write `data` to `dest`, or to `dest` with -2, -3… added when that exists: never over an
    existing file, never a torn one (a temp file, then a hard link, which fails if the name
    was taken in between). The path written."""
    stem, suffix = dest.stem, dest.suffix
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        for attempt in range(1, 1000):
            candidate = dest if attempt == 1 else dest.with_name(f"{stem}-{attempt}{suffix}")
            try:
                os.link(tmp, candidate)
            except FileExistsError:
                continue
            return candidate
        raise FileExistsError(f"no free name beside {dest}")
    finally:
        Path(tmp).unlink(missing_ok=True)
