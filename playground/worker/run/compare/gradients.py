"""The two sides' gradients of one call compared, tensor by tensor (each side's own are made
in spine/backward.py, right after its forward). Worker-side.
"""

from __future__ import annotations

import torch

from playground.engine.report import Comparison
from playground.worker.run.compare.rows import row
from playground.worker.run.compare.tensor_diff import compare_tensors


def compare_grads(
    eager: dict[str, torch.Tensor | None],
    compiled: dict[str, torch.Tensor | None],
    call: int,
    override: dict[str, float] | None,
) -> list[Comparison]:
    """One entry per gradient; a gradient on one side only is a mismatch."""
    results = []
    for name in [*eager, *(n for n in compiled if n not in eager)]:
        e, a = eager.get(name), compiled.get(name)
        label = f"{name}.grad"
        if e is None and a is None:
            continue
        if e is None or a is None:
            note = "gradient missing in " + ("eager" if e is None else "compiled")
            results.append(row(label, call, False, note))
            continue
        results.append(compare_tensors(label, e, a, call, override))
    return results
