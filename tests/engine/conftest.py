"""Engine tests run real worker processes with real torch (CPU), mostly backend eager."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from playground.engine.settings import Settings
from playground.engine.sync import SyncWorker

EAGER = Settings(backend="eager")


@pytest.fixture(scope="session")
def worker() -> Iterator[SyncWorker]:
    """One warm worker for the whole session, as the app and `watch` use it."""
    w = SyncWorker(timeout_s=60)
    w.start()
    yield w
    w.close()


@pytest.fixture
def snippet(tmp_path: Path):
    """Write a snippet (dedented) and return its path."""

    def write(text: str, name: str = "snip.py") -> str:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return str(path)

    return write


def run(worker: SyncWorker, path: str, settings: Settings = EAGER, **kwargs):
    kwargs.setdefault("timing", False)
    return worker.run(path, settings, **kwargs)
