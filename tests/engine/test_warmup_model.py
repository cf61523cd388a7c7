"""The template's trace of a small model (process/warmup_model.py): it leaves nothing a run could
see (torch's thread count, its random state, Dynamo's caches and counters, the numbers Dynamo
names its globals with), a child forked after it still runs a parallel op, and a session's runs
after it report what its first run did and what a fresh process does."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from playground.engine.settings import Settings
from playground.worker.process import warmup_model
from tests.engine.conftest import run, worker_with_env
from tests.engine.test_isolation import _norm, fresh_check

PROBE = r"""
import json, os, torch
from torch._dynamo.bytecode_transformation import _cached_cleaned_instructions
from playground.worker.process import warmup, warmup_model
torch.set_num_threads(2)
# As the template's own warm-up does first: a backward, which on a CUDA build starts autograd's
# device threads (pt_autograd_N, 8 of them on torch 2.14.1 here, with no GPU): theirs, not ours.
torch.ones(2, requires_grad=True).sum().backward()
torch.manual_seed(7)
state = torch.get_rng_state()
from torch._dynamo.bytecode_transformation import unique_id
from torch._dynamo import output_graph
before = (unique_id("probe"), repr(output_graph._compile_id_counter))
tasks = len(os.listdir("/proc/self/task"))
seconds = warmup_model.trace()
tasks_after = len(os.listdir("/proc/self/task"))
after = (unique_id("probe"), repr(output_graph._compile_id_counter))
warmup.freeze()
from torch._dynamo.utils import counters
print(json.dumps({
    "seconds": seconds,
    "threads": torch.get_num_threads(),
    "rng_same": bool(torch.equal(state, torch.get_rng_state())),
    "frames": dict(counters["frames"]),
    "fork_ok": warmup.fork_probe(),
    "cleaned": _cached_cleaned_instructions.cache_info().currsize,
    "names": [before, after],
    "tasks": [tasks, tasks_after],
}))
"""

SNIPPET = """
import torch

def fn(x, n):
    y = torch.relu(x) * n
    print("break")
    return y.sum()

def inputs():
    torch.manual_seed(0)
    return [(torch.randn(4), 2), (torch.randn(6), 3)]
"""


def test_the_trace_leaves_torch_as_it_found_it_and_a_fork_still_runs():
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=180, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["seconds"] > 0
    assert found["threads"] == 2
    assert found["rng_same"]
    assert not any(found["frames"].values()), found["frames"]
    assert found["fork_ok"]
    assert found["cleaned"] == 0
    # No thread started in the template: its ops ran on one torch thread, so that no OpenMP pool
    # (which a forked child could not use) was started; measured without it: one more thread,
    # and the fork probe failed.
    assert found["tasks"][1] == found["tasks"][0], found["tasks"]
    # Dynamo's next name and compile number are where they were: the next run numbers its
    # installed globals as a fresh process does (probe_0 then probe_1: one name taken between).
    (name_before, compiles_before), (name_after, compiles_after) = found["names"]
    assert (name_before, name_after) == (
        "probe_" + name_before.split("_")[-1],
        f"probe_{int(name_before.split('_')[-1]) + 1}",
    )
    assert compiles_after == compiles_before


def _warmed(worker, log, path: str) -> None:
    """The first run, then the model's trace, then a spare forked after it and warmed."""
    run(worker, path, Settings(backend="eager"))
    deadline = time.monotonic() + 120
    while not log.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert log.exists()
    time.sleep(3)  # the spare's own warm-up experiment (forced on below), done before the next save


def test_a_run_after_it_names_dynamos_globals_as_a_fresh_process(snippet, tmp_path):
    """The guards' text names the builtins as Dynamo installed them (G['__builtins_dict___16']),
    numbered by a process-wide count: a warm run's, served by a spare that ran the warm-up
    experiment after the template traced the model, must read as a fresh process's."""
    path = snippet(SNIPPET)
    log = tmp_path / "model-warmup.log"
    env = {
        warmup_model.SWITCH_ENV: "1",
        warmup_model.LOG_ENV: str(log),
        "COMPILE_PLAYGROUND_SPARE_WARMUP": "experiment",
    }
    worker = worker_with_env(env)
    try:
        _warmed(worker, log, path)
        # Served by the spare forked before it (a process started now gets a later pid) or, where
        # that spare was still warming and a fresh fork served it, by the next one, given longer.
        for _ in range(4):
            now = subprocess.Popen(["true"])
            now.wait()
            warm = run(worker, path, Settings(backend="eager"))
            if warm["worker"]["pid"] < now.pid:
                break
            time.sleep(6)
        else:
            pytest.fail("no run was served by a warmed spare")
    finally:
        worker.close()
    fresh = fresh_check(Path(path))
    named = [g for entry in fresh["guards"] for g in entry["guards"] if "__builtins_dict___" in g]
    assert named, "the snippet's print makes Dynamo install the builtins"
    assert [_norm(g) for e in warm["guards"] for g in e["guards"]] == [
        _norm(g) for e in fresh["guards"] for g in e["guards"]
    ]


def test_a_sessions_runs_after_it_report_what_the_first_did(snippet, tmp_path):
    """The first run of a session comes before the model's trace, every later one after it."""
    path = snippet(SNIPPET)
    log = tmp_path / "model-warmup.log"
    worker = worker_with_env({warmup_model.SWITCH_ENV: "1", warmup_model.LOG_ENV: str(log)})
    try:
        first = run(worker, path, Settings(backend="eager"))
        # The template warms between runs only with no request waiting (as a person reads the
        # report before saving again): the next run is asked for once it has.
        deadline = time.monotonic() + 120
        while not log.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        second = run(worker, path, Settings(backend="eager"))
        third = run(worker, path, Settings(backend="eager"))
    finally:
        worker.close()
    assert len(log.read_text().splitlines()) == 1  # once, after the first run
    keys = ("graph_count", "graph_break_count", "graph_breaks", "recompile_count", "recompiles", "guard_details")
    assert first["graph_break_count"] >= 1 and first["recompile_count"] >= 1
    assert {k: second[k] for k in keys} == {k: first[k] for k in keys} == {k: third[k] for k in keys}
