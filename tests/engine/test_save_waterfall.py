"""The save's waterfall (timings.save), measured in a real worker run: every phase from the
client's send to the report, in order, none negative, the ones that follow each other summing
within the total. No thresholds on speed: benchmarks/latency.py measures that."""

from __future__ import annotations

from playground.engine.report import INSIDE_PHASES, Report
from playground.engine.settings import Settings

from .conftest import run

SNIPPET = """
import torch

def fn(x):
    y = torch.sin(x) * 2
    print("mean", y.mean())
    return torch.cos(y) + 1

def inputs():
    yield torch.randn(16, 16)
    yield torch.randn(16, 16)
"""

SEQUENCE = ("request", "fork", "load", "calls", "diagnostics", "reference", "equivalence", "timing")


def test_a_run_reports_its_waterfall(worker, snippet):
    data = run(worker, snippet(SNIPPET), Settings(backend="eager"), timing=True, min_run_time=0.01)
    assert data["error"] is None
    save = Report.from_dict(data).timings.save
    assert save is not None
    assert save.origin == "sent"  # the client sent its time, on the worker's clock
    names = [p.name for p in save.phases]
    assert [n for n in names if n not in INSIDE_PHASES] == list(SEQUENCE)
    assert {"trace", "backend"} <= set(names)
    assert all(p.start_ms >= 0 and p.duration_ms >= 0 for p in save.phases)
    sequence = [save.phase(n) for n in SEQUENCE]
    for before, after in zip(sequence, sequence[1:]):
        assert after.start_ms >= before.end_ms - 1e-3, (before, after)
    assert save.total_ms is not None
    assert save.sequence_ms() <= save.total_ms + 1e-3
    assert sequence[-1].end_ms <= save.total_ms + 1e-3
    calls, trace, backend = save.phase("calls"), save.phase("trace"), save.phase("backend")
    assert trace.start_ms == calls.start_ms
    assert backend.start_ms >= trace.end_ms - 1e-3
    assert data["timings"]["save"]["phases"][0]["name"] == "request"  # the JSON key the contract names


def test_no_timing_no_waterfall(worker, snippet):
    data = run(worker, snippet(SNIPPET), Settings(backend="eager"), timing=False)
    assert data["timings"] is None
