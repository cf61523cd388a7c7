"""Equivalence of values and gradients, then timings, on real torch."""

from __future__ import annotations

import pytest

from playground.engine.settings import Settings

from .conftest import EAGER, run

MODULE = """
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Dropout(0.5), nn.Linear(16, 4))

def inputs():
    return [torch.randn(5, 8, requires_grad=True), torch.randn(5, 8)]
"""


def test_module_values_and_named_parameter_grads_agree_with_dropout(worker, snippet):
    report = run(worker, snippet(MODULE), Settings(backend="aot_eager"))
    eq = report["equivalence"]
    assert report["error"] is None
    assert eq["ok"], eq
    names = {g["name"] for g in eq["grads"]}
    assert {"0.weight.grad", "0.bias.grad", "3.weight.grad", "3.bias.grad", "input[0].grad"} <= names
    assert {g["call"] for g in eq["grads"]} == {1, 2}
    assert all(o["max_abs"] == 0.0 for o in eq["outputs"])  # same seed: dropout masks agree


def test_in_place_mutation_of_an_input_is_compared_not_leaked(worker, snippet):
    path = snippet(
        """
        import torch

        def fn(x):
            x.add_(1)
            return x * 2

        def inputs():
            return [torch.zeros(3)]
        """
    )
    eq = run(worker, path)["equivalence"]
    assert eq["ok"]
    names = [o["name"] for o in eq["outputs"]]
    assert "out" in names and "input (mutated)[0]" in names
    # Had the mutation leaked (no clones), compiled would have seen x == 1 and returned 4.
    assert all(o["max_abs"] == 0.0 for o in eq["outputs"])


def test_a_mismatch_is_reported_per_leaf(worker, snippet):
    path = snippet(
        """
        import torch

        def fn(x):
            bump = 1.0 if torch.compiler.is_compiling() else 0.0
            return {"a": x + bump, "b": (x * 2, 3)}

        def inputs():
            return [torch.ones(2)]
        """
    )
    eq = run(worker, path)["equivalence"]
    assert eq["ok"] is False
    by_name = {o["name"]: o for o in eq["outputs"]}
    assert by_name["out['a']"]["ok"] is False and by_name["out['a']"]["max_abs"] == pytest.approx(1.0)
    assert by_name["out['b'][0]"]["ok"] is True
    assert by_name["out['b'][1]"]["ok"] is True  # a Python int leaf compared by value


def test_bfloat16_uses_the_looser_tolerance(worker, snippet):
    path = snippet(
        """
        import torch

        def fn(x):
            return (x @ x.T).softmax(-1)

        def inputs():
            torch.manual_seed(0)
            return [torch.randn(16, 16, dtype=torch.bfloat16, requires_grad=True)]
        """
    )
    eq = run(worker, path, Settings(backend="aot_eager"))["equivalence"]
    out = eq["outputs"][0]
    assert out["dtype"] == "bfloat16" and out["rtol"] == pytest.approx(1.6e-2)


def test_custom_loss_and_tolerance_are_used(worker, snippet):
    path = snippet(
        """
        import torch

        TOLERANCE = {"atol": 0.5, "rtol": 0.0}

        def fn(x):
            return x * 3, x.sum()

        def loss(out):
            return out[1] * 2

        def inputs():
            return [torch.ones(3, requires_grad=True)]
        """
    )
    eq = run(worker, path)["equivalence"]
    assert eq["ok"]
    assert eq["outputs"][0]["atol"] == 0.5
    (grad,) = eq["grads"]
    assert grad["name"] == "input[0].grad" and grad["ok"]


def test_non_scalar_loss_is_a_snippet_error(worker, snippet):
    path = snippet(
        """
        import torch

        def fn(x):
            return x * 3

        def loss(out):
            return out

        def inputs():
            return [torch.ones(3, requires_grad=True)]
        """
    )
    report = run(worker, path)
    assert report["error"]["kind"] == "snippet"
    assert "scalar" in report["error"]["message"] and "call 1" in report["error"]["message"]


def test_timings_with_spread_and_counts(worker, snippet):
    path = snippet(
        """
        import torch

        def fn(x):
            return (x.sin() + x.cos()).sum()

        def inputs():
            return [torch.randn(64, 64)]
        """
    )
    report = run(worker, path, EAGER, timing=True, min_run_time=0.05)
    t = report["timings"]
    assert t["device"] == "cpu" and t["timed_call"] == 1
    assert t["compile_s"] > 0 and t["eager_ms"] > 0 and t["compiled_ms"] > 0
    assert t["eager_iqr_ms"] is not None and t["compiled_runs"] > 1
    assert t["speedup"] == pytest.approx(t["eager_ms"] / t["compiled_ms"])
    assert t["compile_cache"] == "n/a"  # backend eager has no Inductor caches
    # Timing must not perturb the diagnostics (Timer's thread count once forced a recompile).
    assert report["recompile_count"] == 0


def test_cuda_without_cuda_is_a_clear_settings_error(worker, snippet):
    hello = worker.client.hello
    if hello.cuda_available:
        pytest.skip("this machine has CUDA")
    report = run(worker, snippet(MODULE), Settings(backend="eager", device="cuda"))
    assert report["error"]["kind"] == "settings"
    assert "cuda" in report["error"]["message"] and "--device cpu" in report["error"]["message"]


BATCHNORM = """
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU())

def inputs():
    yield torch.randn(6, 4)
    yield torch.randn(6, 4)
    model.eval()
    yield torch.randn(6, 4)
"""


def test_batchnorm_training_buffers_do_not_break_the_gradient_check(worker, snippet):
    report = run(worker, snippet(BATCHNORM), Settings(backend="aot_eager"))
    assert report["error"] is None, report["error"]
    assert report["equivalence"]["ok"], report["equivalence"]
    assert {g["call"] for g in report["equivalence"]["grads"]} == {1, 2, 3}


def test_mark_dynamic_survives_the_clones(worker, snippet):
    path = snippet(
        """
        import torch

        def fn(x):
            return x * 2

        def inputs():
            for n in (3, 4, 5):
                x = torch.randn(n, 2)
                torch._dynamo.mark_dynamic(x, 0)
                yield x
        """
    )
    report = run(worker, path, Settings(backend="eager", dynamic=False))
    assert report["graph_count"] == 1 and report["recompile_count"] == 0


@pytest.mark.inductor
def test_inductor_cold_compile_and_cache_status(worker, snippet):
    path = snippet(
        """
        import torch

        def fn(x):
            return torch.nn.functional.gelu(x @ x.T) * 2

        def inputs():
            torch.manual_seed(0)
            return [torch.randn(32, 32, requires_grad=True)]
        """
    )
    warm = run(worker, path, Settings(backend="inductor"), timing=True, min_run_time=0.05)
    assert warm["error"] is None and warm["equivalence"]["ok"], warm["equivalence"]
    assert warm["graph_count"] == 1
    assert warm["graphs"][0]["output_code"]  # Inductor's generated code, from the trace
    again = run(worker, path, Settings(backend="inductor"), timing=True, min_run_time=0.05)
    # The FX-graph cache survives dynamo.reset(): the second "cold" compile is a cache hit.
    assert again["timings"]["compile_cache"] in ("hit", "partial")
    assert again["timings"]["note"] == ""  # Inductor's one-time start-up is behind us
    cold = run(worker, path, Settings(backend="inductor", cold=True), timing=True, min_run_time=0.05)
    assert cold["timings"]["compile_cache"] == "disabled"
    assert cold["timings"]["compile_s"] > again["timings"]["compile_s"]


@pytest.mark.skipif("not __import__('shutil').which('nvidia-smi')", reason="needs a CUDA device")
def test_cuda_run_is_synchronized(worker, snippet):  # pragma: no cover - no GPU in CI
    report = run(worker, snippet(MODULE), Settings(backend="inductor", device="cuda"), timing=True)
    assert report["timings"]["device"] == "cuda"
