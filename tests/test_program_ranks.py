"""A program run across ranks (`check PROGRAM --ranks N`) is run as `torchrun --nproc-per-node N
PROGRAM` runs it: the program's own `init_process_group()`, its DDP and its torch.compile calls.
Each rank's graphs, graph breaks and recompiles are the ones torch logs for the same program run
by plain torchrun (tests/plain_truth.py in each of torchrun's processes: torch's own counters and
TORCH_LOGS records, nothing of ours); a break in torch's file is named by that file in check's
text; and nothing of the run listens on an address another host
could reach: the program's env:// rendezvous meets in a file of the run's private folder, not in
the TCPStore torch makes on MASTER_PORT (which listens on every interface).

The test process stays torch-free; each side runs in fresh processes.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import threading
import time
from functools import cache
from pathlib import Path
from typing import Any

from playground.cli.textreport import render
from playground.engine.report import GraphBreak, Report
from playground.engine.wording import breaks
from tests.engine.test_ranks import _check
from tests.engine.test_ranks_private import _descendants, _listening, _loopback

ROOT = Path(__file__).resolve().parents[1]
DDP_TRAIN = ROOT / "tests" / "programs" / "ddp_train.py"
RANK_RAISES = ROOT / "tests" / "programs" / "_rank_raises.py"
COUNTS = ("graph_count", "graph_break_count", "recompile_count")
TIMEOUT_S = 600


def check(path: Path, world: int, *flags: str) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "playground", "check", str(path), "--ranks", str(world), "--json", "--no-timing"]
    done = subprocess.run([*cmd, *flags], capture_output=True, text=True, timeout=TIMEOUT_S, cwd=ROOT)
    assert done.stdout.strip(), done.stderr[-3000:]
    return json.loads(done.stdout)


def torchrun_truth(path: Path, world: int) -> list[dict[str, Any]]:
    """What torch says of each rank of `torchrun --nproc-per-node WORLD PROGRAM`, by rank."""
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={world}"]
    env = {**os.environ, "TORCH_LOGS": "graph_breaks,recompiles"}
    done = subprocess.run(
        [*cmd, str(ROOT / "tests" / "plain_truth.py"), str(path)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
        cwd=ROOT,
        env=env,
    )
    said = [json.loads(line) for line in done.stdout.splitlines() if line.startswith('{"torch"')]
    by_rank = {truth["rank"]: truth for truth in said}
    assert sorted(by_rank) == list(range(world)), (done.stdout[-3000:], done.stderr[-3000:])
    return [by_rank[rank] for rank in range(world)]


@cache
def ddp_train_report() -> dict[str, Any]:
    return check(DDP_TRAIN, 2)


def test_a_ddp_program_compiles_on_each_rank_what_it_compiles_under_torchrun() -> None:
    truth = torchrun_truth(DDP_TRAIN, 2)
    assert all(t["exit"] == 0 and t["exception"] is None for t in truth), truth
    # The ranks differ (rank 1's short last batches recompile): a report that gave every rank
    # rank 0's counts would not pass.
    assert truth[0]["recompile_count"] != truth[1]["recompile_count"], truth
    report = ddp_train_report()
    assert report["kind"] == "program", report["notes"]
    assert report["error"] is None, report["error"]
    assert report["world_size"] == 2 and len(report["ranks"]) == 2
    found = [{field: rank[field] for field in COUNTS} for rank in report["ranks"]]
    assert found == [{field: t[field] for field in COUNTS} for t in truth]
    # The top level is rank 0's, and the ranks' difference is said.
    assert {field: report[field] for field in COUNTS} == found[0]
    assert "recompiles" in {d["what"] for d in report["divergence"]}, report["divergence"]
    assert all(rank["program_exit"]["code"] == 0 for rank in report["ranks"])


def test_a_break_in_torchs_own_file_is_named_by_that_file_in_checks_text() -> None:
    report = ddp_train_report()
    assert report["error"] is None, report["error"]
    sites = {(b["file"], b["line"]) for b in report["graph_breaks"]}
    # DDP's forward breaks in torch's own file (the line torch logged), the model's in the program's.
    ddp = [(f, line) for f, line in sites if f.endswith("/torch/nn/parallel/distributed.py")]
    own = [line for f, line in sites if f == report["snippet"]]
    assert ddp and own, sites
    text = render(Report.from_dict(report))
    for _, line in ddp:
        assert f"  torch/nn/parallel/distributed.py:{line}  Unsupported" in text, text
        assert f"  line {line}  " not in text, text
    for line in own:
        assert f"  line {line}  Data-dependent branching" in text, text


def test_a_breaks_place_names_its_file_when_it_is_not_the_programs_own() -> None:
    torch_file = "/venv/lib/python3.11/site-packages/torch/nn/parallel/distributed.py"
    site = GraphBreak(reason="Unsupported method call", file=torch_file, line=1757)
    assert breaks.where(site, "/home/me/train.py") == "torch/nn/parallel/distributed.py:1757"
    assert breaks.where(site) == "torch/nn/parallel/distributed.py:1757"  # a library's, by its folder
    stdlib = GraphBreak(file="/usr/lib/python3.11/contextlib.py", line=105)
    assert breaks.where(stdlib, "/home/me/train.py") == "contextlib.py:105"
    helper = GraphBreak(file="/home/me/helpers.py", line=7)
    assert breaks.where(helper, "/home/me/train.py") == "helpers.py:7"
    assert breaks.where(GraphBreak(file="/home/me/train.py", line=22), "/home/me/train.py") == "line 22"
    assert breaks.site_lines(site, "/home/me/train.py")[0].text.startswith("torch/nn/parallel/distributed.py:1757  ")


#: The program's own group, held for 3 s on both ranks (compiled run and eager reference alike),
#: so that the test sees every listener the run opens.
HOLD = """\
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
model = torch.compile(torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(4, 4)), backend="eager")
for _ in range(2):
    model(torch.randn(2, 4)).sum().backward()
dist.barrier()
time.sleep(3)
print("rank", dist.get_rank(), "done")
dist.destroy_process_group()
"""


def test_a_programs_own_process_group_listens_on_no_address_but_the_loopback(tmp_path: Path) -> None:
    path = tmp_path / "hold.py"
    path.write_text(textwrap.dedent(HOLD))
    cmd = [sys.executable, "-m", "playground", "check", str(path), "--ranks", "2", "--json", "--no-timing"]
    proc = subprocess.Popen(
        [*cmd, "--timeout", "120"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
        env={**os.environ, "TMPDIR": str(tmp_path)},
    )
    seen: list[str] = []
    out: list[bytes] = []
    reader = threading.Thread(target=lambda: out.append(proc.stdout.read()))  # type: ignore[union-attr]
    reader.start()
    try:
        while proc.poll() is None:
            seen += _listening(_descendants(proc.pid))
            time.sleep(0.02)
    finally:
        proc.kill()
        reader.join(10)
    report: dict[str, Any] = json.loads(out[0])
    assert report["kind"] == "program" and report["error"] is None, report["error"]
    assert [rank["output"]["text"].strip() for rank in report["ranks"]] == ["rank 0 done", "rank 1 done"]
    assert seen, "no listener seen at all: the test saw nothing of the run"
    assert [a for a in seen if not _loopback(a)] == [], sorted(set(seen))


def torchrun_failure(path: Path, world: int) -> dict[str, Any]:
    """How plain `torchrun --nproc-per-node WORLD PROGRAM` ends a job one of whose ranks raised:
    its exit status, the rank its summary names as the root cause (the first observed failure),
    and that rank's exception as its traceback on stderr says it (type, message, the program's
    innermost line)."""
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={world}", str(path)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, cwd=ROOT)
    _, _, root = done.stderr.partition("Root Cause (first observed failure):")
    found = re.search(r"rank\s*:\s*(\d+)", root)
    assert found, done.stderr[-3000:]
    rank = int(found.group(1))
    said = [line.split(": ", 1)[1] for line in done.stderr.splitlines() if line.startswith(f"[rank{rank}]: ")]
    lines = [int(m) for m in re.findall(rf'File "{re.escape(str(path))}", line (\d+)', "\n".join(said))]
    exc_type, _, message = said[-1].partition(": ")
    return {"exit": done.returncode, "rank": rank, "type": exc_type, "message": message, "line": lines[-1]}


def test_a_rank_whose_program_raises_stops_the_others_as_torchrun_does(tmp_path: Path) -> None:
    """Rank 1 raises while rank 0 goes on into DDP's all-reduce: torchrun stops rank 0 and fails
    with rank 1's error; so does the run, long before its timeout, with nothing of it left."""
    truth = torchrun_failure(RANK_RAISES, 2)
    assert truth["exit"] != 0 and truth["rank"] == 1, truth
    # Long enough that a run left waiting for its timeout cannot pass for a stopped one, even
    # with the worker's start on a loaded machine (a minute, seen with 2 cores shared).
    timeout = 240
    flags = ("--ranks", "2", "--timeout", str(timeout), "--no-timing")
    code, report, elapsed = _check(tmp_path, RANK_RAISES.read_text(), *flags, timeout=timeout)
    assert code != 0
    assert elapsed < timeout / 2, elapsed  # stopped, not waited for until the timeout
    error = report["error"]
    assert (error["type"], error["line"]) == (truth["type"], truth["line"]), error
    assert error["message"].startswith(f"rank 1: the program raised: {truth['message']}"), error
    failed = report["ranks"][1]
    assert failed["program_exit"]["exception"] == {k: truth[k] for k in ("type", "message", "line")}
    stopped = report["ranks"][0]["error"]
    assert stopped["type"] == "RankStopped", stopped
    assert stopped["message"].startswith("rank 0 was stopped") and "because rank 1 failed" in stopped["message"]
    assert f"rank 0 was stopped at line {stopped['line']} because rank 1 failed" in error["message"], error
