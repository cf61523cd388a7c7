"""A job across machines: two torchrun invocations rendezvousing over the loopback (c10d) as two
"nodes", each running the playground as its one rank. Each rank's run meets the other's in
torchrun's store, gets its report through it, and publishes the whole run's merged report to
its own folder of the session (`--present DIR` makes `DIR/rankR/`); `follow DIR` reads the
lowest rank's. The per-rank counts are what torch itself says of the snippet on two processes
(tests/ranks_truth.py), a node that vanishes leaves the other with a clear error within the
timeout, and no process of either node is left (each node's processes carry a TMPDIR of the
test's own)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from playground.engine.session import SessionReader
from tests.processes import with_env

ROOT = Path(__file__).resolve().parents[2]
LESSON = ROOT / "snippets" / "ranks" / "one_rank_recompiles.py"
COUNTS = ("graph_count", "graph_break_count", "recompile_count")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Nodes:
    """Two torchrun invocations of `compile-playground ARGS` that meet as the two nodes of one
    job; every process of theirs carries TMPDIR=`tmp` (the test's mark)."""

    def __init__(self, tmp: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.private = tmp / "tmp"
        self.private.mkdir(exist_ok=True)
        port = _free_port()
        self.procs: list[subprocess.Popen[str]] = []
        for node in range(2):
            cmd = [sys.executable, "-m", "torch.distributed.run", "--nnodes", "2", "--nproc-per-node", "1"]
            cmd += ["--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{port}", "--rdzv-id", f"t{port}"]
            # Node 0 hosts torchrun's store (the rendezvous's): a test that kills a node kills node 1.
            cmd += ["--rdzv-conf", f"is_host={int(node == 0)}"]
            cmd += ["-m", "playground", *args]
            node_env = {**os.environ, **(env or {}), "TMPDIR": str(self.private), "TEST_NODE": str(node)}
            # Into files, not pipes: `watch --json-lines` fills a pipe that nobody reads while the
            # test waits, and then blocks.
            with open(tmp / f"node{node}.out", "w") as out, open(tmp / f"node{node}.err", "w") as err:
                self.procs.append(subprocess.Popen(cmd, cwd=ROOT, env=node_env, stdout=out, stderr=err, text=True))
        self.tmp = tmp

    def output(self, node: int) -> tuple[str, str]:
        return (self.tmp / f"node{node}.out").read_text(), (self.tmp / f"node{node}.err").read_text()

    def wait(self, timeout: float) -> list[tuple[int, str, str]]:
        """Each node's exit status, stdout and stderr."""
        done = []
        for node, proc in enumerate(self.procs):
            proc.wait(timeout=timeout)
            done.append((proc.returncode, *self.output(node)))
        return done

    def left(self) -> list[tuple[int, str]]:
        """The processes of either node still alive a few seconds after both have ended."""
        marker = f"TMPDIR={self.private}"
        deadline = time.monotonic() + 8
        while with_env(marker) and time.monotonic() < deadline:
            time.sleep(0.2)
        return with_env(marker)

    def kill(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()


def _truth(path: Path, world: int = 2) -> list[dict[str, Any]]:
    cmd = [sys.executable, str(ROOT / "tests" / "ranks_truth.py"), str(path), str(world)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def _counts(ranks: list[Any]) -> list[dict[str, int]]:
    return [{k: (r[k] if isinstance(r, dict) else getattr(r, k)) for k in COUNTS} for r in ranks]


def test_two_torchrun_nodes_publish_each_ranks_counts_as_torch_compiles_them(tmp_path: Path) -> None:
    session = tmp_path / "session"
    follower = SessionReader(session)  # started before the nodes: nothing to show yet
    assert follower.poll() is not None and follower.poll() is None
    nodes = Nodes(tmp_path, "check", str(LESSON), "--json", "--no-timing", "--present", str(session))
    try:
        ended = nodes.wait(timeout=300)
    finally:
        nodes.kill()
    assert [code for code, _, _ in ended] == [0, 0], [err[-2000:] for _, _, err in ended]
    assert not nodes.left(), "a process of a node was left"
    assert not list(nodes.private.glob("compile-playground-*"))
    truth = _counts(_truth(LESSON))
    assert truth == [
        {"graph_count": 1, "graph_break_count": 0, "recompile_count": 0},
        {"graph_count": 2, "graph_break_count": 0, "recompile_count": 1},
    ]
    # Each node prints the whole run, rank 0's report on top (the contract's rule).
    for _, out, _ in ended:
        report = json.loads(out)
        assert report["world_size"] == 2 and _counts(report["ranks"]) == truth
        assert {d["what"] for d in report["divergence"]} == {"graph_count", "guards", "recompiles"}
        assert report["error"] is None and report["equivalence"]["ok"]
    assert sorted(p.name for p in session.iterdir()) == ["rank0", "rank1"]
    news = follower.poll()
    assert news is not None and follower.source == session.resolve() / "rank0"
    assert [run.number for run in news.runs] == [1]
    report = news.runs[0].report
    assert report.world_size == 2 and _counts(list(report.ranks)) == truth
    assert next(d for d in report.divergence if d.what == "recompiles").message.startswith("only rank 1 recompiled")
    assert news.presenter is not None and not news.presenter.live  # check presents its one run, then leaves


#: Node 1's rank sleeps before its first call; node 0's waits for it in the all_reduce of fn (line 11).
#: Each node's rank is marked in MARKS as the snippet loads: written whole and renamed (on one
#: line, so that the collective stays at line 13), since every process that loads it (a rank's
#: run and its references) writes it, and the test must never read it truncated and not yet written.
WAITS = """\
import os
import time

import torch
import torch.distributed as dist

SETTINGS = {"backend": "eager", "ranks": 2}
_tmp = f"{os.environ['MARKS']}.{os.getpid()}"; open(_tmp, "w").write(os.environ["RANK"]); os.replace(_tmp, os.path.join(os.environ["MARKS"], f"node{os.environ['TEST_NODE']}"))


def fn(x):
    y = x * 2
    dist.all_reduce(y)
    return y


def inputs():
    if os.environ["TEST_NODE"] == "1":
        time.sleep(120)
    yield torch.ones(4)
"""


def test_a_node_killed_mid_run_leaves_the_other_rank_with_a_clear_error_within_the_timeout(tmp_path: Path) -> None:
    snippet, marks = tmp_path / "waits.py", tmp_path / "marks"
    snippet.write_text(WAITS)
    marks.mkdir()
    nodes = Nodes(
        tmp_path, "check", str(snippet), "--json", "--no-timing", "--timeout", "40", env={"MARKS": str(marks)}
    )
    try:
        deadline = time.monotonic() + 120
        while len(list(marks.iterdir())) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        rank_of = {int(p.name[4:]): int(p.read_text()) for p in marks.iterdir()}
        assert sorted(rank_of.values()) == [0, 1], rank_of
        time.sleep(1.0)  # node 0's rank is in its all_reduce, node 1's asleep
        started = time.monotonic()
        nodes.procs[1].send_signal(signal.SIGKILL)  # the node's agent: the rest of the node must follow it
        nodes.procs[0].wait(timeout=120)
        elapsed = time.monotonic() - started
        out, err = nodes.output(0)
    finally:
        nodes.kill()
    assert elapsed < 40, elapsed
    assert nodes.procs[0].returncode == 1, err[-2000:]  # torchrun's for a process that failed (check's 2)
    report = json.loads(out)
    error = report["error"]
    gone, waited = rank_of[1], rank_of[0]
    # Where the survivor waited: the all_reduce's line (its stack stands at fn's `def` while the
    # compiled graph that holds the collective runs; the collective is named instead).
    assert error is not None and error["line"] == 13, error
    assert error["message"].startswith(f"rank {gone} sent no report through torchrun's store"), error["message"]
    assert f"rank {waited} was left waiting in a collective at line 13" in error["message"], error["message"]
    assert report["ranks"][gone]["error"]["type"] == "RankMissing"
    assert not nodes.left(), "a process of a node was left"


def _runs(session: Path, rank: int) -> list[str]:
    runs = session / f"rank{rank}" / "runs"
    return sorted(p.name for p in runs.glob("0*.json")) if runs.is_dir() else []


def _until(what: Any, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not what() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert what()


def test_watching_on_two_nodes_pairs_each_save_and_a_signal_to_each_torchrun_ends_both(tmp_path: Path) -> None:
    snippet, session = tmp_path / "snippet.py", tmp_path / "session"
    snippet.write_text(LESSON.read_text())
    nodes = Nodes(tmp_path, "watch", str(snippet), "--json-lines", "--no-timing", "--present", str(session))
    try:
        _until(lambda: all(_runs(session, rank) for rank in (0, 1)), 240)
        # The fix the lesson suggests: every rank compiles one graph, and nothing differs.
        snippet.write_text(LESSON.read_text().replace('"dynamic": False', '"dynamic": True'))
        _until(lambda: all(len(_runs(session, rank)) == 2 for rank in (0, 1)), 120)
        for proc in nodes.procs:
            proc.send_signal(signal.SIGINT)  # Ctrl-C in each node's terminal reaches torchrun only
        ended = nodes.wait(timeout=60)
    finally:
        nodes.kill()
    assert not nodes.left(), "a process of a node was left"
    assert all("stopped by SIGINT" in err for _, _, err in ended), [err[-1000:] for _, _, err in ended]
    news = SessionReader(session).poll()
    assert news is not None and [run.number for run in news.runs] == [1, 2]
    first, fixed = (run.report for run in news.runs)
    assert _counts(list(first.ranks)) == _counts(_truth(LESSON))
    said = [(r.equivalence_word, r.notes, r.error) for r in fixed.ranks]
    assert fixed.settings.dynamic is True and fixed.divergence == () and fixed.error is None, said
    assert [r.graph_count for r in fixed.ranks] == [1, 1]
    assert news.presenter is not None and not news.presenter.live
