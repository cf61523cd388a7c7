"""Compile time per phase from torch's own compilation metrics, on real workers."""

from __future__ import annotations

import pytest

from playground.cli.textreport import render
from playground.engine.report import Report
from playground.engine.settings import Settings
from playground.worker.capture.compile_phases import PHASES

from .conftest import run

#: Forty-eight ops in one graph: a cold eager compile of ~100 ms. On three ops (~40 ms once the
#: spare child faults its heap in ahead) one preemption on a loaded machine moved the ratios
#: below by a fifth.
NO_BREAK = """
import torch

def fn(x):
    for _ in range(16):
        x = torch.sin(x) * 2 + torch.cos(x)
    return x

def inputs():
    yield torch.randn(64, 64)
"""

BREAK = """
import torch

def fn(x):
    y = torch.sin(x) * 2
    print("mean", y.mean())
    return torch.cos(y) + 1

def inputs():
    yield torch.randn(16, 16)
"""


def _check_sums(report: dict) -> None:
    for row in report["compile_phases"]:
        assert all(row[k] >= 0 for k in PHASES)
        assert sum(row[k] for k in PHASES) == pytest.approx(row["total_s"], abs=1e-5)


def test_eager_phases_cover_the_cold_compile(worker, snippet):
    report = run(worker, snippet(NO_BREAK), Settings(backend="eager"), timing=True, min_run_time=0.01)
    assert report["error"] is None
    _check_sums(report)
    (row,) = report["compile_phases"]
    assert row["call"] == 1 and row["function"] == "fn" and row["line"] == 3
    # eager has no Inductor: only Dynamo and the backend call take time
    assert row["inductor_s"] == row["codegen_s"] == row["compile_s"] == 0
    cold = report["timings"]["compile_s"]
    first = report["compile_phase_totals"]["first_call_s"]
    first_run = report["compile_phase_totals"]["first_call_run_s"]
    assert row["first_run_s"] == first_run > 0
    # What torch's metrics leave out of an eager compile is mostly the graph's first run, which
    # the worker times around the backend's callable (first_run_s). Together, measured 95-99%
    # (2.13, 11 runs, busy 2-core machine); the rest is Dynamo entering the frame and the guards'
    # first check. The metrics alone were 77-98%, but on a loaded machine the first run (the
    # child's first parallel op) took 0.26 s of a 0.45 s call: their share alone is not the claim.
    assert first <= cold
    assert 0.9 * cold <= first + first_run <= 1.02 * cold, (first, first_run, cold)
    assert "compile time by phase (s):" in render(Report.from_dict(report))


@pytest.mark.inductor
def test_inductor_phases_cover_the_cold_compile(worker, snippet):
    settings = Settings(backend="inductor", cold=True)
    report = run(worker, snippet(BREAK), settings, timing=True, min_run_time=0.01)
    assert report["error"] is None
    _check_sums(report)
    rows = [r for r in report["compile_phases"] if r["call"] == 1]
    assert [r["function"] for r in rows] == ["fn", "torch_dynamo_resume_in_fn_at_5"]
    for row in rows:  # every phase of an Inductor compile is timed
        assert row["dynamo_s"] > 0 and row["aot_s"] > 0 and row["inductor_s"] > 0 and row["compile_s"] > 0
    cold = report["timings"]["compile_s"]
    first = report["compile_phase_totals"]["first_call_s"]
    first_run = report["compile_phase_totals"]["first_call_run_s"]
    # The rest of the first call is running it (the print between the two graphs, the graphs) and
    # time no timer of torch's holds. Torch's metrics cover 99.6% of it on a quiet machine (three
    # runs); in a full `make test` on 2 cores, 89.9% once (0.44 s of 4.3 s: the niced child waits
    # for a core between torch's timers). A phase of a quarter of it left out still fails here.
    assert 0.75 * cold <= first <= cold, (first, first_run, cold)
