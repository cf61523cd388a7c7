"""The follower's side: `SessionReader`, the runs since the last poll, each checked against its
`content_sha256`; a bad entry a one-line problem."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from playground.engine.session.folder_files import (
    _RUN_NAME,
    MAX_PRESENTER_BYTES,
    MAX_RUN_BYTES,
    PRESENTER,
    RUNS,
    SessionFileError,
    _text_bytes,
    load_json,
    read_bounded,
)
from playground.engine.session.rank_folders import followed_folder
from playground.engine.session.records import PresenterState, PublishedRun
from playground.engine.snippet import read_regular_bytes
from playground.engine.textsafe import one_line

try:  # POSIX; elsewhere a second presenter is not refused (the folder's owner check still is)
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]


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
    is not what a writer writes is skipped, with one line in `problems` saying why.

    A job's session (a folder of rank folders, rank_folders.py) is read from its lowest rank's
    folder: `source`, looked for again at each poll until a run has been read from it."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder).absolute()
        #: The folder read: `folder`, or the rank folder of a job's session in it.
        self.source = self.folder
        self.seen = 0
        self.presenter: PresenterState | None = None
        self._polled = False
        self._trouble = ""

    def _read_presenter(self) -> tuple[PresenterState | None, str]:
        """presenter.json's state, or None and why not ("" when there is no such file)."""
        try:
            data = read_bounded(self.source / PRESENTER, MAX_PRESENTER_BYTES)
        except FileNotFoundError:
            return None, ""
        except OSError as exc:
            return None, f"presenter.json unreadable: {exc.strerror or exc}"
        try:
            return PresenterState.from_dict(load_json(data)), ""
        except (ValueError, TypeError, AttributeError, KeyError) as exc:
            return None, f"presenter.json ignored: {exc}"

    def _read_run(self, number: int) -> PublishedRun:
        run = PublishedRun.from_dict(load_json(read_bounded(self.source / RUNS / f"{number:06d}.json", MAX_RUN_BYTES)))
        if run.number != number:
            raise SessionFileError(f"it says it is run {run.number}")
        if run.report.content_sha256 != hashlib.sha256(_text_bytes(run.source)).hexdigest():
            # What a fork would write and run must be what the presenter ran: never a text that
            # was changed (or never ran) under a report that vouches for another one.
            raise SessionFileError("its text is not the text that ran (content_sha256 differs)")
        return run

    def poll(self) -> SessionNews | None:
        """The news since the last call, or None when nothing changed."""
        if not self.seen:
            self.source = followed_folder(self.folder)
        presenter, trouble = self._read_presenter()
        quiet = presenter is not None and presenter == self.presenter and presenter.run <= self.seen
        if self._polled and quiet:
            return None
        runs: list[PublishedRun] = []
        problems: list[str] = [trouble] if trouble else []
        # A set: 000001.json and 0000001.json are one number, read once.
        numbers = sorted({n for n in run_numbers(self.source) if n > self.seen})
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
