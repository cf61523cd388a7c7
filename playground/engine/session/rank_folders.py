"""A session of torchrun's job: one presenter per rank, each in a folder of its own.

Each process of a job that torchrun launched (`engine.ranks.Launch`) is a presenter of its own
(`check --present DIR` or `watch --present DIR` on every node), and one folder has one
presenter (its lock), so rank R presents to `DIR/rankR/`. What each rank publishes is the whole
run's report, every rank's merged (the ranks exchange their reports through torchrun's store),
so a follower of `DIR` follows one of them: the lowest rank whose folder is there, and the
others are there for a node that cannot see it (`DIR` on each node's own disk).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path

from playground.engine.ranks import launch_of
from playground.engine.session.folder_files import PRESENTER, RUNS

_RANK_FOLDER = re.compile(r"^rank(\d{1,6})$")


def presenting_folder(folder: str | Path, environ: Mapping[str, str] | None = None) -> Path:
    """Where this process presents when asked for `folder`: `folder/rankR` when torchrun
    launched it as rank R of its job, else `folder` itself."""
    launch = launch_of(os.environ if environ is None else environ)
    return Path(folder) if launch is None else Path(folder) / f"rank{launch.rank}"


def is_session(folder: Path) -> bool:
    """Whether a presenter has written `folder` (its presenter.json or its runs)."""
    return (folder / PRESENTER).exists() or (folder / RUNS).is_dir()


def rank_folders(folder: Path) -> list[Path]:
    """The ranks' session folders in `folder`, lowest rank first: real folders (never a link)
    named rankR that a presenter has written."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    found = []
    for name in names:
        match = _RANK_FOLDER.match(name)
        if match is None:
            continue
        path = folder / name
        try:
            if not stat.S_ISDIR(os.lstat(path).st_mode):
                continue
        except OSError:
            continue
        if is_session(path):
            found.append((int(match.group(1)), path))
    return [path for _, path in sorted(found)]


def followed_folder(folder: Path) -> Path:
    """The folder a follower of `folder` reads: `folder` when a presenter writes it, else its
    lowest rank's folder (a job's session), else `folder` (no presenter yet)."""
    if is_session(folder):
        return folder
    ranks = rank_folders(folder)
    return ranks[0] if ranks else folder
