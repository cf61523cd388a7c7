"""Engine tests run real worker processes with real torch (CPU), mostly backend eager."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from playground.engine.events import RunResult
from playground.engine.passes import NO_PASSES, Passes
from playground.engine.run_request import DEFAULT_MIN_RUN_TIME_S
from playground.engine.settings import Settings
from playground.engine.sync import SyncWorker
from tests.requests import request_for

EAGER = Settings(backend="eager")


@pytest.fixture
def snippet(tmp_path: Path):
    """Write a snippet (dedented) and return its path."""

    def write(text: str, name: str = "snip.py") -> str:
        path = tmp_path / name
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
        return str(path)

    return write


def run_result(
    worker: SyncWorker,
    path: str,
    settings: Settings = EAGER,
    *,
    timing: bool = False,
    min_run_time: float = DEFAULT_MIN_RUN_TIME_S,
    timeout_s: float | None = None,
    passes: Passes = NO_PASSES,
) -> RunResult:
    """One run through the warm worker, as the client returns it (timings off unless asked)."""
    request = request_for(path, settings, timing=timing, min_run_time=min_run_time, timeout_s=timeout_s, passes=passes)
    return worker.run(request)


def run(
    worker: SyncWorker,
    path: str,
    settings: Settings = EAGER,
    *,
    timing: bool = False,
    min_run_time: float = DEFAULT_MIN_RUN_TIME_S,
    timeout_s: float | None = None,
    passes: Passes = NO_PASSES,
) -> dict[str, Any]:
    """The run's report as the contract's JSON object (what `check --json` prints): what most
    engine tests pin, key by key."""
    result = run_result(
        worker, path, settings, timing=timing, min_run_time=min_run_time, timeout_s=timeout_s, passes=passes
    )
    return result.report.to_dict()


def worker_with_env(env: dict[str, str]) -> SyncWorker:
    """A started worker whose environment has `env` added (the client passes its own on), this
    process's environment as it was afterwards; its template's pid as `template_pid`."""
    import os

    saved = dict(os.environ)
    os.environ.update(env)
    try:
        w = SyncWorker(timeout_s=120)
        hello = w.start()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    w.template_pid = hello.pid  # type: ignore[attr-defined]
    return w
