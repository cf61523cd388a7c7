"""The run child's malloc settings (playground/worker/run/spine/malloc.py) and the spare's
prefault (playground/worker/process/memory.py), measured in page faults in a fresh process: what they are for is that memory a run frees and allocates again is not faulted
in again."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from playground.worker.process import memory
from playground.worker.run.spine import malloc

PROBE = """
import ctypes, json, resource, sys
from playground.worker.process import memory
from playground.worker.run.spine import malloc

mode = sys.argv[1]
tuned = malloc.keep_freed_memory() if mode != "plain" else None
if mode == "warmed":  # a spare child: its warm-up run ended in the timing phase's settings
    malloc.as_a_plain_process()
prefaulted = memory.prefault_heap(64) if mode != "plain" else None
plain_again = malloc.as_a_plain_process() if mode == "timed" else None
libc = malloc.glibc()


def churn(mib):
    faults = []
    for _ in range(3):  # a run's churn: a block allocated, written, freed, three times
        before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        block = libc.malloc(mib << 20)
        ctypes.memset(block, 1, mib << 20)
        libc.free(block)
        faults.append(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
    return faults


big = churn(64)
small = churn(4)
print(json.dumps({"tuned": tuned, "prefaulted": prefaulted, "plain_again": plain_again, "faults": big, "small": small}))
"""


def probe(mode: str) -> dict:
    out = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, timeout=60, check=True)
    return json.loads(out.stdout)


@pytest.mark.skipif(malloc.glibc() is None, reason="malloc here is not glibc's")
def test_freed_memory_is_reused_without_faulting_it_in_again():
    pages = (64 << 20) // 4096
    plain = probe("plain")
    # glibc's defaults: a 64 MiB block is its own mapping, unmapped on free and faulted in anew.
    assert all(f > pages // 2 for f in plain["faults"]), plain
    for mode in ("tuned", "warmed"):
        tuned = probe(mode)
        assert tuned["tuned"] is True and tuned["prefaulted"] is True, tuned
        # The heap was faulted in ahead (prefault_heap) and is kept: no round pays for its
        # pages, also after a warm-up whose timing phase set malloc as a plain process has it.
        assert all(f < pages // 20 for f in tuned["faults"]), (mode, tuned)


@pytest.mark.skipif(malloc.glibc() is None, reason="malloc here is not glibc's")
def test_the_timed_phase_allocates_as_a_plain_process_does():
    """Steady-state timings must cost what they cost in the user's own process: a block over
    glibc's 32 MiB ceiling is mapped and faulted in on every call there, and again after
    as_a_plain_process(); a 4 MiB one is reused in the steady state (the last round) in both
    (glibc's defaults take two rounds to get there: [1025, 1011, 0] faults measured)."""
    pages = (64 << 20) // 4096
    plain, timed = probe("plain"), probe("timed")
    assert timed["plain_again"] is True, timed
    assert all(f > pages // 2 for f in timed["faults"]), timed
    assert timed["small"][-1] < 64 and plain["small"][-1] < 64, (plain, timed)


@pytest.mark.parametrize(
    ("value", "mib"),
    [(None, 128), ("0", 0), ("64", 64), ("99999", 4096), ("-3", 128), ("lots", 128), ("", 128), ("1e3", 128)],
)
def test_the_prefault_size_from_the_environment(value, mib, monkeypatch):
    if value is None:
        monkeypatch.delenv("COMPILE_PLAYGROUND_PREFAULT_MIB", raising=False)
    else:
        monkeypatch.setenv("COMPILE_PLAYGROUND_PREFAULT_MIB", value)
    assert memory.prefault_mib() == mib
    if mib == 0:
        assert memory.prefault_heap() is False  # nothing faulted in, nothing held
