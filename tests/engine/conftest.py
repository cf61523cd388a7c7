"""Engine tests run real worker processes with real torch (CPU), mostly backend eager."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from playground.engine.events import RunResult
from playground.engine.settings import Settings
from playground.engine.sync import SyncWorker

EAGER = Settings(backend="eager")


@pytest.fixture
def snippet(tmp_path: Path):
    """Write a snippet (dedented) and return its path."""

    def write(text: str, name: str = "snip.py") -> str:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return str(path)

    return write


def run_result(worker: SyncWorker, path: str, settings: Settings = EAGER, **kwargs) -> RunResult:
    """One run through the warm worker, as the client returns it (timings off unless asked)."""
    kwargs.setdefault("timing", False)
    return worker.run(path, settings, **kwargs)


def run(worker: SyncWorker, path: str, settings: Settings = EAGER, **kwargs) -> dict[str, Any]:
    """The run's report as the contract's JSON object (what `check --json` prints): what most
    engine tests pin, key by key."""
    return run_result(worker, path, settings, **kwargs).report.to_dict()
