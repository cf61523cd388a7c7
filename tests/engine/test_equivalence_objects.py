"""Equivalence of structured outputs on a real worker (backend eager): no false mismatches.

Identical dataclass outputs once reported FAIL (`==` on tensors raises, the comparison fell
back to `is`) with their gradients skipped; a generator target gave "generator != generator".
"""

from __future__ import annotations

from .conftest import run


def _grad_names(eq: dict) -> set[str]:
    return {g["name"] for g in eq["grads"]}


def test_dataclass_output_is_equal_and_both_fields_feed_the_gradients(worker, snippet):
    path = snippet(
        """
        import dataclasses
        import torch

        @dataclasses.dataclass
        class Out:
            y: torch.Tensor
            z: torch.Tensor

        def fn(x, w):
            return Out(y=x * 2, z=x + 1 + w)

        def inputs():
            return [(torch.ones(3, requires_grad=True), torch.ones(3, requires_grad=True))]
        """
    )
    report = run(worker, path)
    assert report["error"] is None, report["error"]
    eq = report["equivalence"]
    assert eq["ok"], eq
    assert [(o["name"], o["ok"]) for o in eq["outputs"]] == [("out.y", True), ("out.z", True)]
    # x reaches the loss through y and z, w only through z: both gradients exist only if
    # both fields joined the default loss.
    assert _grad_names(eq) == {"input[0].grad", "input[1].grad"}
    assert all(g["ok"] and g["max_abs"] == 0.0 for g in eq["grads"]), eq["grads"]


def test_namedtuple_output_is_compared_by_field_name_with_gradients(worker, snippet):
    path = snippet(
        """
        import collections
        import torch

        Out = collections.namedtuple("Out", "y z")

        def fn(x, w):
            return Out(x.sin(), (x * w).sum())

        def inputs():
            torch.manual_seed(0)
            return [(torch.randn(4, requires_grad=True), torch.randn(4, requires_grad=True))]
        """
    )
    eq = run(worker, path)["equivalence"]
    assert eq["ok"], eq
    assert [o["name"] for o in eq["outputs"]] == ["out.y", "out.z"]
    assert _grad_names(eq) == {"input[0].grad", "input[1].grad"}
    assert all(g["ok"] for g in eq["grads"])


def test_a_generator_target_is_not_compared_and_not_a_mismatch(worker, snippet):
    path = snippet(
        """
        import torch

        def fn(x):
            yield x * 2

        def inputs():
            return [torch.ones(2)]
        """
    )
    report = run(worker, path)
    assert report["error"] is None, report["error"]
    eq = report["equivalence"]
    (out,) = eq["outputs"]
    assert eq["ok"] and out["compared"] is False and out["note"] == "not compared: a generator"
