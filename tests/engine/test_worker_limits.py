"""A workshop host's limits (playground/worker/process/limits.py) on real workers: a run over the memory
cap is a snippet error that names the cap and the worker carries on; the thread count reaches
the run; a machine short of memory keeps no spare child."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from playground.engine.sync import SyncWorker
from playground.worker.process import limits

from .conftest import run

GREEDY = """
import torch

def fn(x):
    return x + 1

def inputs():
    print("threads", torch.get_num_threads())
    big = torch.ones(2**30 // 4)  # 1 GiB, written
    return [(big[:4],)]
"""

MODEST = """
import torch

def fn(x):
    return x * 2

def inputs():
    print("threads", torch.get_num_threads())
    return [(torch.ones(16 * 2**20 // 4),)]  # 16 MiB, and the copies the run makes of it
"""


def children_of(pid: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_text()
        except OSError:
            continue
        if int(stat.rpartition(")")[2].split()[1]) == pid:
            found.append(int(name))
    return found


def test_a_run_over_the_memory_cap_is_a_snippet_error_naming_it(snippet, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(limits.MEMORY_ENV, "512")
    monkeypatch.setenv(limits.THREADS_ENV, "1")
    with SyncWorker(timeout_s=120) as worker:
        worker.start()
        report = run(worker, snippet(GREEDY))
        error = report["error"]
        assert error is not None and error["kind"] == "snippet", error
        assert "over the per-run memory cap of 512 MiB" in error["message"], error
        assert limits.MEMORY_ENV in error["message"]
        assert "threads 1" in report["output"]["text"]
        # The worker is fine, and a run under the cap is not hindered by it.
        report = run(worker, snippet(MODEST, "modest.py"))
        assert report["error"] is None, report["error"]
        assert report["equivalence"]["ok"] and "threads 1" in report["output"]["text"]


def test_without_a_cap_the_same_run_succeeds(snippet, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.delenv(limits.MEMORY_ENV, raising=False)
    with SyncWorker(timeout_s=120) as worker:
        worker.start()
        assert run(worker, snippet(GREEDY))["error"] is None


def test_short_of_memory_no_spare_child_waits(snippet, monkeypatch: pytest.MonkeyPatch):
    path = snippet(MODEST)

    def idle_children(min_free: str) -> list[int]:
        monkeypatch.setenv(limits.MIN_FREE_ENV, min_free)
        with SyncWorker(timeout_s=120) as worker:
            hello = worker.start()
            assert run(worker, path)["error"] is None
            # The spare is forked once the run's report is sent (and the run's child takes a
            # moment to exit): look for a while, and answer what was there at the end.
            deadline = time.monotonic() + 8
            kids = children_of(hello.pid)
            spare = min_free == "0" and os.environ.get(limits.SPARE_ENV) != "0"
            while time.monotonic() < deadline and (not kids if spare else True):
                time.sleep(0.2)
                kids = children_of(hello.pid)
            return kids

    assert idle_children("0"), "with memory to spare, a spare child waits for the next run"
    assert idle_children(str(1 << 24)) == []  # 16 TiB "needed": short, so nothing held ahead
    monkeypatch.setenv(limits.SPARE_ENV, "0")
    assert idle_children("0") == []  # the host turned the spare off
