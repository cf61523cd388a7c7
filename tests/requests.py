"""Run requests for the tests that drive a worker: the file at a path under settings as given."""

from __future__ import annotations

import os

from playground.engine.passes import NO_PASSES, Passes
from playground.engine.run_request import DEFAULT_MIN_RUN_TIME_S, RunFlags, RunRequest
from playground.engine.settings import Settings
from playground.engine.snippet import PreparedRun, prepared_as_given


def request_for(
    path: str | os.PathLike[str],
    settings: Settings,
    *,
    timing: bool = True,
    min_run_time: float = DEFAULT_MIN_RUN_TIME_S,
    timeout_s: float | None = None,
    passes: Passes = NO_PASSES,
    trace: bool = False,
    last: bool = False,
    prepared: PreparedRun | None = None,
) -> RunRequest:
    """The run of the file at `path` under `settings` (read here, its SETTINGS only checked),
    or of `prepared` when given, as the front ends ask for it."""
    flags = RunFlags(timing=timing, min_run_time=min_run_time, timeout_s=timeout_s)
    return RunRequest(prepared or prepared_as_given(path, settings), flags, passes, trace=trace, last=last)
