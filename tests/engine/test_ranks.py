"""A run across ranks through real worker processes: each rank's counts, what differs between
them, the snippet's collectives paired rank with rank (and reference with reference), ranks
that fall out of step ending within the timeout with the rank and the line named, and no
process left behind (every process of the run carries the test's own TMPDIR: none may be
alive once `check` has returned)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

from tests.processes import with_env

ROOT = Path(__file__).resolve().parents[2]

SHAPE = """\
import torch
import torch.distributed as dist

SETTINGS = {"backend": "eager", "dynamic": False, "ranks": 2}


def fn(x):
    return torch.sin(x) * 2


def inputs():
    torch.manual_seed(0)
    for step in range(3):
        yield torch.randn(3 if (dist.get_rank() == 1 and step == 2) else 4, 8)
"""

COLLECTIVE = """\
import torch
import torch.distributed as dist

SETTINGS = {"backend": "aot_eager"}


def fn(x):
    y = x * 2
    dist.all_reduce(y)
    return y.sin()


def inputs():
    torch.manual_seed(dist.get_rank())
    for _ in range(2):
        yield torch.randn(4, 8, requires_grad=True)
"""

EXTRA_COLLECTIVE = """\
import torch
import torch.distributed as dist

SETTINGS = {"backend": "eager"}


def fn(x):
    y = x * 2
    if dist.get_rank() == 1 and x.shape[0] == 3:
        dist.all_reduce(y)
    return y.sin()


def inputs():
    for n in (4, 3):
        yield torch.randn(n, 8)
"""

STUCK = """\
import time

import torch
import torch.distributed as dist

SETTINGS = {"backend": "eager"}


def fn(x):
    return x.sin()


def inputs():
    if dist.get_rank() == 1:
        time.sleep(1000)
    yield torch.randn(4)
"""


def _check(
    tmp_path: Path, source: str, *flags: str, timeout: float = 120, env: dict[str, str] | None = None
) -> tuple[int, dict[str, Any], float]:
    path = tmp_path / "snippet.py"
    path.write_text(textwrap.dedent(source))
    private = tmp_path / "tmp"
    private.mkdir(exist_ok=True)
    marker = f"TMPDIR={private}"
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "playground", "check", str(path), "--json", *flags],
        capture_output=True,
        text=True,
        timeout=timeout + 60,
        cwd=ROOT,
        env={**os.environ, **(env or {}), "TMPDIR": str(private)},
    )
    elapsed = time.monotonic() - started
    assert done.stdout.strip(), done.stderr[-3000:]
    deadline = time.monotonic() + 5
    while with_env(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not with_env(marker), "a process of the run was left"
    assert not list(private.glob("compile-playground-*")), list(private.iterdir())
    return done.returncode, json.loads(done.stdout), elapsed


def test_only_the_rank_whose_shape_changed_recompiles_and_the_divergence_says_so(tmp_path: Path) -> None:
    code, report, _ = _check(tmp_path, SHAPE, "--no-timing")
    assert code == 0 and report["error"] is None
    assert report["world_size"] == 2 and report["settings"]["ranks"] == 2
    counts = [(r["graph_count"], r["recompile_count"]) for r in report["ranks"]]
    assert counts == [(1, 0), (2, 1)]
    assert report["graph_count"] == 1  # the top level is rank 0's
    by_what = {d["what"]: d for d in report["divergence"]}
    assert by_what["recompiles"]["ranks"] == {"0": 0, "1": 1}
    assert by_what["recompiles"]["message"].startswith("only rank 1 recompiled, at call 3: size of x dim 0 4 → 3")
    assert all(r["equivalence"]["ok"] for r in report["ranks"])
    assert any("joined by torch.distributed (gloo)" in n for n in report["notes"])


def test_the_fix_dynamic_true_makes_the_ranks_agree(tmp_path: Path) -> None:
    code, report, _ = _check(tmp_path, SHAPE, "--no-timing", "--dynamic", "true")
    assert code == 0
    assert [r["recompile_count"] for r in report["ranks"]] == [0, 0]
    assert report["divergence"] == []


def test_a_collective_in_the_compiled_region_pairs_the_ranks_and_their_references(tmp_path: Path) -> None:
    """Values agree; the gradient does not. Dynamo traces the in-place all_reduce as a functional
    collective whose backward sums the gradient over the ranks, where eager's c10d op has none
    (measured under torchrun on 2.13 and 2.14.1: compiled x.grad is world_size x eager's)."""
    code, report, _ = _check(tmp_path, COLLECTIVE, "--ranks", "2")
    assert code == 0 and report["error"] is None, report["error"]
    for rank in report["ranks"]:
        assert rank["error"] is None
        assert all(o["verdict"] == "identical" for o in rank["equivalence"]["outputs"])
        grads = rank["equivalence"]["grads"]
        assert grads and not any(g["ok"] for g in grads)
        assert all(abs(g["max_rel"] - 1.0) < 1e-3 for g in grads)  # compiled 2g against eager g
        assert rank["timings"]["eager_runs"] == report["ranks"][0]["timings"]["eager_runs"]
    assert report["ranks"][0]["graph_count"] == report["ranks"][1]["graph_count"] >= 1


def test_a_collective_only_one_rank_makes_ends_within_the_timeout_naming_rank_and_line(tmp_path: Path) -> None:
    code, report, elapsed = _check(
        tmp_path, EXTRA_COLLECTIVE, "--ranks", "2", "--timeout", "20", "--no-timing", timeout=20
    )
    error = report["error"]
    assert code != 0 and error["type"] == "CollectiveMismatch", error
    assert error["line"] == 10
    assert "rank 1 made a collective at line 10 that rank 0 never reached" in error["message"]
    assert elapsed < 20 + 15
    assert "GLHF" not in error["message"]  # gloo's words made plain
    assert all("GLHF" not in (r["error"] or {}).get("message", "") for r in report["ranks"])


def test_a_rank_still_running_at_the_timeout_is_killed_and_its_line_named(tmp_path: Path) -> None:
    code, report, elapsed = _check(tmp_path, STUCK, "--timeout", "8", "--ranks", "2", timeout=8)
    error = report["error"]
    assert code != 0 and error["type"] == "CollectiveMismatch", error
    assert "rank 1 was still running at line 15 when the run timed out" in error["message"]
    assert report["ranks"][1]["error"]["type"] == "Timeout"
    assert report["ranks"][0]["graph_count"] == 1  # what rank 0 found stays
    assert elapsed < 8 + 15


def test_a_plain_run_has_no_rank_keys(tmp_path: Path) -> None:
    plain = SHAPE.replace(', "ranks": 2', "").replace("dist.get_rank() == 1 and ", "")
    code, report, _ = _check(tmp_path, plain, "--no-timing")
    assert code == 0
    assert not {"world_size", "ranks", "divergence"} & set(report)
    assert "ranks" not in report["settings"]


def test_gloo_words_and_stack_lines_are_read_once_in_the_worker() -> None:
    from playground.engine.snippet import snippet_line_in_stack as stack_line
    from playground.worker.run.ranks import collective_trouble, plain_gloo

    gloo = (
        "[/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection closed by peer "
        "[127.0.0.1]:60102. This is typically caused by a remote worker crashing. Check the logs. GLHF!"
    )
    assert plain_gloo(gloo) == "Connection closed by peer [127.0.0.1]:60102"
    assert collective_trouble("Timed out waiting 3000ms for recv operation to complete") == (
        "waited 3000 ms in a collective"
    )
    assert collective_trouble("ValueError: boom") is None
    dump = 'Thread 0x1 (most recent call first):\n  File "/a/b.py", line 15 in inputs\n  File "/x/y.py", line 3 in f\n'
    assert stack_line(dump, "/a/b.py") == 15 and stack_line(dump, "/c.py") is None


def test_a_distributed_snippet_on_one_process_is_told_of_ranks(tmp_path: Path) -> None:
    code, report, _ = _check(tmp_path, SHAPE, "--ranks", "1", "--no-timing")
    error = report["error"]
    assert code == 2 and error["kind"] == "snippet" and error["line"] == 14, error  # dist.get_rank() in inputs()
    assert "Default process group has not been initialized" in error["message"]
    assert "--ranks N, or n in the app, runs it on N processes" in error["message"]


def test_a_check_under_part_of_torchruns_environment_is_told_it_joins_no_outside_group(tmp_path: Path) -> None:
    # Without TORCHELASTIC_RUN_ID this is no torchrun launch (engine.ranks.launch_of): the
    # playground runs on its own. Under torchrun itself it joins the job (test_ranks_nodes.py).
    launched = {"WORLD_SIZE": "2", "RANK": "1", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "1"}
    code, report, _ = _check(tmp_path, SHAPE, "--ranks", "1", "--no-timing", env=launched)
    error = report["error"]
    assert code == 2 and error["kind"] == "snippet" and error["line"] == 14, error
    assert "WORLD_SIZE=2 is set, as torchrun sets it" in error["message"]
    assert "joins no outside group" in error["message"]


def test_a_snippet_that_makes_the_group_itself_is_told_how_to_guard_it(tmp_path: Path) -> None:
    twice = SHAPE.replace("SETTINGS = {", 'dist.init_process_group("gloo")\nSETTINGS = {')
    code, report, _ = _check(tmp_path, twice, "--no-timing")
    assert code == 2 and report["error"]["kind"] == "snippet", report["error"]
    assert "put init_process_group under `if not dist.is_initialized():`" in report["error"]["message"]
