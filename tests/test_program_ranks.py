"""A program run across ranks (`check PROGRAM --ranks N`) is run as `torchrun --nproc-per-node N
PROGRAM` runs it: the program's own `init_process_group()`, its DDP and its torch.compile calls.
Each rank's graphs, graph breaks and recompiles are the ones torch logs for the same program run
by plain torchrun (tests/plain_truth.py in each of torchrun's processes: torch's own counters and
TORCH_LOGS records, nothing of ours), and nothing of the run listens on an address another host
could reach: the program's env:// rendezvous meets in a file of the run's private folder, not in
the TCPStore torch makes on MASTER_PORT (which listens on every interface).

The test process stays torch-free; each side runs in fresh processes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

from tests.engine.test_ranks_private import _descendants, _listening, _loopback

ROOT = Path(__file__).resolve().parents[1]
DDP_TRAIN = ROOT / "tests" / "programs" / "ddp_train.py"
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


def test_a_ddp_program_compiles_on_each_rank_what_it_compiles_under_torchrun() -> None:
    truth = torchrun_truth(DDP_TRAIN, 2)
    assert all(t["exit"] == 0 and t["exception"] is None for t in truth), truth
    # The ranks differ (rank 1's short last batches recompile): a report that gave every rank
    # rank 0's counts would not pass.
    assert truth[0]["recompile_count"] != truth[1]["recompile_count"], truth
    report = check(DDP_TRAIN, 2)
    assert report["kind"] == "program", report["notes"]
    assert report["error"] is None, report["error"]
    assert report["world_size"] == 2 and len(report["ranks"]) == 2
    found = [{field: rank[field] for field in COUNTS} for rank in report["ranks"]]
    assert found == [{field: t[field] for field in COUNTS} for t in truth]
    # The top level is rank 0's, and the ranks' difference is said.
    assert {field: report[field] for field in COUNTS} == found[0]
    assert "recompiles" in {d["what"] for d in report["divergence"]}, report["divergence"]
    assert all(rank["program_exit"]["code"] == 0 for rank in report["ranks"])


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
