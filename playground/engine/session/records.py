"""What a session folder holds, as typed values: a published run and the presenter's state."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from playground.engine.hello import WorkerHello
from playground.engine.report import Report
from playground.engine.session.folder_files import FORMAT, SessionFileError, _int, _time, process_alive
from playground.engine.settings import Settings

try:  # POSIX; elsewhere a second presenter is not refused (the folder's owner check still is)
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]


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
    follower tell a presenter that was killed, on `host` (the presenter's machine: a folder on
    a shared filesystem may be followed from another, where the pid means nothing); `run` is
    their newest run, `pane` the pane on their screen, `hello` their worker's handshake (torch
    version, cuda)."""

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
    host: str = ""

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
            "host": self.host,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PresenterState:
        for key in ("start", "user", "snippet_name", "pane", "host"):
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
            hello=WorkerHello.from_dict(data["hello"]) if data.get("hello") else None,
            since=_time(data.get("since") or 0.0, "since"),
            ended_at=None if data.get("ended_at") is None else _time(data["ended_at"], "ended_at"),
            host=str(data.get("host") or ""),
        )

    @property
    def present(self) -> bool:
        """Live, and the process that said so still runs (a killed presenter says nothing). A
        presenter on another machine (a torchrun node writing to a shared folder) cannot be
        asked: its word, `live`, is all there is."""
        if self.host and self.host != this_host():
            return self.live
        return self.live and process_alive(self.pid, self.start)


def this_host() -> str:
    """This machine's name (the kernel's node name, as `hostname` says it), as a presenter
    records it; "" where it cannot be had."""
    try:
        return os.uname().nodename
    except (AttributeError, OSError):
        return ""
