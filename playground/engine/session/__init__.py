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

from playground.engine.session.folder_files import (
    FORMAT,
    LOCK,
    MAX_DEPTH,
    MAX_PRESENTER_BYTES,
    MAX_RUN_BYTES,
    PID_MAX,
    PRESENTER,
    RUNS,
    SessionFileError,
    load_json,
    process_alive,
    read_bounded,
)
from playground.engine.session.forks import fork_path, setting_flags, write_new_file
from playground.engine.session.rank_folders import followed_folder, presenting_folder, rank_folders
from playground.engine.session.reader import SessionNews, SessionReader, run_numbers, source_that_ran
from playground.engine.session.records import PresenterState, PublishedRun
from playground.engine.session.writer import SessionError, SessionWriter

__all__ = [
    "FORMAT",
    "LOCK",
    "MAX_DEPTH",
    "MAX_PRESENTER_BYTES",
    "MAX_RUN_BYTES",
    "PID_MAX",
    "PRESENTER",
    "PresenterState",
    "PublishedRun",
    "RUNS",
    "SessionError",
    "SessionFileError",
    "SessionNews",
    "SessionReader",
    "SessionWriter",
    "followed_folder",
    "fork_path",
    "load_json",
    "presenting_folder",
    "process_alive",
    "rank_folders",
    "read_bounded",
    "run_numbers",
    "setting_flags",
    "source_that_ran",
    "write_new_file",
]
