"""A rank that fails on its own, through real worker processes: the rank that raised or died is
the run's error (not the ranks it left waiting in a collective), the run ends non-zero within
its timeout, and no process of the run is left (tests/engine/test_ranks.py's `_check` looks)."""

from __future__ import annotations

from pathlib import Path

from playground.engine.report import Report, RunError
from tests.engine.test_ranks import _check

RAISES = """\
import torch
import torch.distributed as dist

SETTINGS = {"backend": "eager", "ranks": 2}


def fn(x):
    y = x.sin()
    dist.all_reduce(y)
    return y


def inputs():
    yield torch.randn(4)
    if dist.get_rank() == 1:
        raise ValueError("rank one refuses")
    yield torch.randn(4)
"""

EXITS = """\
import os

import torch
import torch.distributed as dist

SETTINGS = {"backend": "eager", "ranks": 2}


def fn(x):
    return x.sin()


def inputs():
    if dist.get_rank() == 1:
        os._exit(3)
    yield torch.randn(4)
"""

SIZES = """\
import torch
import torch.distributed as dist

SETTINGS = {"backend": "eager", "ranks": 2}


def fn(x):
    y = x.sin()
    dist.all_reduce(y)
    return y


def inputs():
    yield torch.randn(4 + dist.get_rank())
"""


def test_the_rank_that_raised_is_the_runs_error_and_the_rank_it_left_waiting_is_stopped(tmp_path: Path) -> None:
    # A run timeout whose collective timeout (a quarter: 50 s) is far from a prompt stop.
    code, report, elapsed = _check(tmp_path, RAISES, "--ranks", "2", "--timeout", "200", "--no-timing", timeout=200)
    error = report["error"]
    assert code != 0
    assert (error["type"], error["kind"], error["line"]) == ("ValueError", "snippet", 16), error
    assert error["message"].startswith("rank 1: inputs() raised while producing call 2: rank one refuses")
    assert report["ranks"][1]["error"]["type"] == "ValueError"
    # Rank 0 waited in fn's all_reduce for rank 1: stopped once rank 1 failed, as torchrun stops
    # a job's other workers, not left to the collective's timeout.
    stopped = report["ranks"][0]["error"]
    assert stopped["type"] == "RankStopped", stopped
    # Where it stood: the compiled frame's line or its all_reduce's; none when the stop found it
    # between two calls, in the playground's own code (a loaded machine).
    assert stopped["line"] in (7, 9, None), stopped
    where = f" at line {stopped['line']}" if stopped["line"] else ""
    assert error["message"].endswith(f"rank 0 was stopped{where} because rank 1 failed, as torchrun stops them")
    assert elapsed < 200


def test_a_rank_that_exits_without_a_report_fails_the_run_even_when_rank_0_finished(tmp_path: Path) -> None:
    code, report, _ = _check(tmp_path, EXITS, "--ranks", "2", "--timeout", "30", "--no-timing", timeout=30)
    assert code != 0
    assert report["ranks"][0]["error"] is None and report["ranks"][0]["graph_count"] == 1
    assert report["error"]["type"] == "RankDied"
    assert report["error"]["message"] == "rank 1 ended without a report (exit status 3)"
    assert report["ranks"][1]["torch_version"] == report["torch_version"] != ""


def test_ranks_that_send_a_collective_different_sizes_are_a_collective_mismatch_at_its_line(tmp_path: Path) -> None:
    code, report, elapsed = _check(tmp_path, SIZES, "--ranks", "2", "--timeout", "30", "--no-timing", timeout=30)
    error = report["error"]
    assert code != 0 and error["type"] == "CollectiveMismatch" and error["line"] in (7, 9), error
    aborted = [r for r, each in enumerate(report["ranks"]) if "SIGABRT" in (each["error"] or {}).get("message", "")]
    if aborted:  # gloo's length check ends the process that received the longer message
        assert f"rank {aborted[0]} ended without a report (signal SIGABRT)" in error["message"]
        assert "gloo aborts a rank whose peer sends a collective of another size" in error["message"]
    assert elapsed < 30 + 15


def _with(error: RunError | None) -> Report:
    return Report(torch_version="2.x", error=error)


def test_a_failure_of_rank_0_alone_stays_rank_0s_own_error() -> None:
    from playground.worker.process.rank_errors import run_error

    own = RunError(kind="snippet", type="ValueError", message="boom", line=3)
    assert run_error([_with(own), _with(None)], [None, None]) is None
    assert run_error([_with(own), _with(own)], [None, None]) is None


def test_a_rank_killed_at_the_timeout_is_not_the_cause_when_another_rank_raised() -> None:
    from playground.worker.process.rank_errors import run_error

    stuck = RunError(kind="snippet", type="Timeout", message="rank 0 was still running at the run's timeout")
    raised = RunError(kind="snippet", type="KeyError", message="'x'", line=12)
    error = run_error([_with(stuck), _with(raised)], [7, None])
    assert error is not None and (error.type, error.line) == ("KeyError", 12)
    assert error.message == "rank 1: 'x'; rank 0 was still running when the run timed out"


def test_under_torchrun_a_ranks_own_failure_is_named_before_a_rank_whose_report_never_came() -> None:
    from playground.worker.process.rank_errors import run_error

    missing = RunError(kind="worker", type="RankMissing", message="rank 0 sent no report through torchrun's store: …")
    own = RunError(kind="worker", type="LaunchError", message="rank 1 could not join the process group: rank 0 …")
    error = run_error([_with(missing), _with(own)], [None, None])
    assert error is not None and error.type == "LaunchError"
    assert (
        error.message
        == "rank 1 could not join the process group: rank 0 …; rank 0 sent no report through torchrun's store"
    )
    waited = RunError(kind="snippet", type="RuntimeError", message="Connection closed by peer [127.0.0.1]:1", line=11)
    gone = RunError(kind="worker", type="RankMissing", message="rank 1 sent no report through torchrun's store: …")
    error = run_error([_with(waited), _with(gone)], [None, None])
    assert error is not None and error.type == "RankMissing" and error.line == 11  # where rank 0 waited for it
    assert error.message.endswith("rank 0 was left waiting in a collective at line 11")


#: The snippet ends the group the playground made for it, between its calls.
ENDS_GROUP = """\
import torch
import torch.distributed as dist

SETTINGS = {"backend": "eager", "ranks": 2}


def fn(x):
    return x.sin()


def inputs():
    yield torch.ones(4)
    dist.destroy_process_group()
"""


def test_a_snippet_that_ends_its_group_between_calls_is_a_completed_run(tmp_path: Path) -> None:
    """Its calls ran; the playground's own timing loop agrees over a group of its own, so the run
    completes, timed, with no error (it was a compile error, with advice to use --ranks N)."""
    code, report, _ = _check(tmp_path, ENDS_GROUP, timeout=60)
    assert code == 0 and report["error"] is None, report["error"]
    assert report["timings"] is not None
    assert all(rank["error"] is None for rank in report["ranks"])


def test_a_collective_after_the_snippet_ended_its_group_is_the_snippets_error(tmp_path: Path) -> None:
    source = ENDS_GROUP.replace("return x.sin()", "dist.all_reduce(x)\n    return x.sin()")
    source += "    yield torch.ones(4)\n"  # a call after the group has gone
    code, report, _ = _check(tmp_path, source, "--no-timing", timeout=60)
    error = report["error"]
    assert code == 2 and error["kind"] == "snippet", error
    assert "destroy_process_group() ended it" in error["message"] and "--ranks N" not in error["message"]
    assert error["line"] == next(i for i, row in enumerate(source.splitlines(), 1) if "all_reduce" in row)


#: A collective whose shapes differ by rank.
UNEVEN = """\
import torch
import torch.distributed as dist

SETTINGS = {"backend": "eager", "ranks": 2}


def fn(x):
    y = x * 2
    dist.all_reduce(y)
    return y.sin()


def inputs():
    yield torch.ones(4 + dist.get_rank(), 8)
"""


def test_a_collective_whose_shapes_differ_by_rank_is_named_at_the_collectives_line(tmp_path: Path) -> None:
    code, report, _ = _check(tmp_path, UNEVEN, "--no-timing", timeout=60)
    error = report["error"]
    assert code == 2 and error["type"] == "CollectiveMismatch", error
    line = next(i for i, row in enumerate(UNEVEN.splitlines(), 1) if "all_reduce" in row)
    assert error["line"] == line and f"at line {line}" in error["message"], error
