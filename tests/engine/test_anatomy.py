"""Issue 21: what each compile did, per graph (nodes, kernels, caches, config), on real workers."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import pytest

from playground.engine.report import Report
from playground.engine.settings import Settings

from .conftest import run, run_result

BREAK = """
import torch

def fn(x):
    y = x.exp()
    print("called with", x.shape)  # the break
    return y.sum(0)

def inputs():
    yield torch.randn(8, 8)
"""

POINTWISE = """
import torch

def fn(x, w):
    a = x.sin() * {scale}
    b = a.relu() + x.cos()
    return (b @ w).tanh()

def inputs():
    yield torch.randn(16, 16), torch.randn(16, 16)
"""


def test_eager_anatomy_counts_nodes_per_graph(worker, snippet):
    settings = Settings(backend="eager", config=(("dynamo.recompile_limit", 5),))
    report = run_result(worker, snippet(BREAK), settings).report
    assert report.error is None
    rows = report.compile_anatomy
    assert [r.graph for r in rows] == [1, 2]
    for row, graph in zip(rows, report.graphs):
        assert row.compile_id == graph.compile_id
        assert row.fx_nodes > row.ops == graph.op_count > 0
        assert row.modules == () and row.aot_autograd_cache == ""
    # the setting the run asked for is in force while each graph compiles
    config = {(c.module, c.name): c for c in rows[0].config}
    assert config[("dynamo", "recompile_limit")].value == "5"
    assert config[("dynamo", "recompile_limit")].default == "8"
    # a canned report without the key still loads
    wire = report.to_dict()
    assert "compile_anatomy" in wire
    del wire["compile_anatomy"]
    assert Report.from_dict(wire).compile_anatomy == ()


@pytest.mark.inductor
def test_inductor_anatomy_kernels_and_caches_miss_then_hit(worker, snippet):
    # A constant no earlier run compiled: the FX-graph cache has never seen this graph.
    path = snippet(POINTWISE.format(scale=round(random.uniform(2, 3), 9)))
    settings = Settings(backend="inductor")
    first = run(worker, path, settings)
    assert first["error"] is None
    (row,) = first["compile_anatomy"]
    (module,) = row["modules"]
    assert row["fx_nodes"] > row["ops"] > 0 and row["ir_nodes"] > 0
    assert module["post_grad_nodes"] > 0
    assert module["kernels"] and all(k.startswith("cpp_fused_") for k in module["kernels"])
    assert "mm" in module["extern_kernels"]
    code = first["graphs"][0]["output_code"]
    assert all(f"{k} = async_compile." in code for k in module["kernels"])
    assert module["fx_graph_cache"] == "miss" and row["aot_autograd_cache"] == "miss"
    again = run(worker, path, settings)  # the same bytes, after the next run's reset()
    (hit,) = again["compile_anatomy"]
    assert hit["modules"][0]["fx_graph_cache"] == "hit" and hit["aot_autograd_cache"] == "hit"
    assert hit["modules"][0]["kernels"] == module["kernels"]
    assert hit["modules"][0]["fx_graph_key"] == module["fx_graph_key"] != ""
    assert hit["modules"][0]["post_grad_nodes"] == module["post_grad_nodes"]


@pytest.mark.inductor
def test_cold_run_says_caches_bypassed(worker, snippet):
    path = snippet(POINTWISE.format(scale=2.5))
    report = run(worker, path, Settings(backend="inductor", cold=True))
    (row,) = report["compile_anatomy"]
    assert row["modules"][0]["fx_graph_cache"] in ("", "bypass")
    names = {(c["module"], c["name"]) for c in row["config"]}
    assert ("compiler", "force_disable_caches") in names


RESETS = """
import torch

def make(k):
    def fn(x):
        for _ in range(k):
            x = x.sin()
        return x + {scale}
    return fn

for k in (1, 2, 3):  # a graph of k + 1 ops each time
    torch.compile(make(k))(torch.randn(4))
    torch._dynamo.reset()  # compile ids start again at 0/0
"""


def _plain_trace_counts(path, tmp_path) -> tuple[int, int]:
    """(compiles, Inductor output modules) in torch's own trace of `python PATH`."""
    folder = tmp_path / "trace"
    env = {**os.environ, "TORCH_TRACE": str(folder)}
    subprocess.run([sys.executable, str(path)], env=env, check=True, capture_output=True, timeout=600)
    text = "".join(p.read_text() for p in folder.iterdir())
    return text.count('{"dynamo_output_graph"'), text.count('{"inductor_output_code"')


@pytest.mark.inductor
def test_a_program_that_resets_gets_each_compiles_own_modules(tmp_path):
    # After a reset the next compile is 0/0 again: its modules are its own, never piled onto
    # the first 0/0's as "backward" passes that never ran.
    path = tmp_path / "resets.py"
    path.write_text(RESETS.format(scale=round(random.uniform(2, 3), 9)))
    compiles, modules = _plain_trace_counts(path, tmp_path)
    cmd = [sys.executable, "-m", "playground", "check", str(path), "--json", "--no-timing"]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    report = json.loads(done.stdout)
    assert report["kind"] == "program" and report["error"] is None
    rows = report["compile_anatomy"]
    assert len(rows) == report["graph_count"] == compiles == 3
    assert {row["compile_id"] for row in rows} == {"0/0"}
    assert sum(len(row["modules"]) for row in rows) == modules
    for row in rows:
        assert [m["pass"] for m in row["modules"]] == ["forward"]
    # Each graph's own FX nodes (its ops, its one input and its output), never those of the
    # last graph compiled under the same id.
    assert [row["ops"] for row in rows] == [2, 3, 4]
    assert [row["fx_nodes"] for row in rows] == [row["ops"] + 2 for row in rows]
