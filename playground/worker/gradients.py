"""Gradients of one call, eager and compiled: the loss, the backward passes, the comparison.

Worker-side. Eager's backward runs right after eager's forward (see calls.py); the compiled
backward runs in the equivalence phase.
"""

from __future__ import annotations

from typing import Any

import torch

from playground.worker import equivalence
from playground.worker.context import RunContext
from playground.worker.failures import RunFailure, failure

Grads = dict[str, torch.Tensor | None]


def loss_of(ctx: RunContext, loss_fn: Any, output: Any, which: str, index: int) -> torch.Tensor | None:
    """The scalar to differentiate (None when nothing in it requires grad)."""
    if loss_fn is None:
        return equivalence.default_loss(output, ctx.notes)
    try:
        value = loss_fn(output)
    except BaseException as exc:  # noqa: BLE001
        raise failure("snippet", exc, ctx.path, f"loss() raised on the {which} output of call {index}") from None
    if not isinstance(value, torch.Tensor) or value.numel() != 1:
        shape = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
        raise RunFailure(
            "snippet",
            "TypeError",
            f"loss() must return a scalar tensor, got {shape} for call {index}",
        )
    return value if value.requires_grad else None


def eager_grads(
    ctx: RunContext, index: int, out: Any, args: tuple[Any, ...], loss_fn: Any, owner: torch.nn.Module | None
) -> Grads | None:
    """Eager's gradients for one call (None when nothing requires grad)."""
    equivalence.zero_grads(args, owner)
    loss_e = loss_of(ctx, loss_fn, out, "eager", index)
    if loss_e is None:
        return None
    try:
        loss_e.reshape(()).backward()
    except BaseException as exc:  # noqa: BLE001
        raise failure("snippet", exc, ctx.path, f"eager backward of call {index} raised") from None
    grads = equivalence.collect_grads(args, owner)
    # Parameters are shared by the module and its compiled wrapper: clear them between passes.
    equivalence.zero_grads(args, owner)
    return grads


def compare_compiled(
    ctx: RunContext,
    index: int,
    g_eager: Grads,
    out: Any,
    args: tuple[Any, ...],
    loss_fn: Any,
    owner: torch.nn.Module | None,
    override: Any,
) -> list[dict[str, Any]]:
    """The compiled backward of one call, compared with eager's gradients."""
    equivalence.zero_grads(args, owner)
    loss_c = loss_of(ctx, loss_fn, out, "compiled", index)
    if loss_c is None:
        return [
            {
                "name": "loss",
                "call": index,
                "ok": False,
                "max_abs": None,
                "max_rel": None,
                "note": "compiled output does not require grad",
            }
        ]
    try:
        loss_c.reshape(()).backward()
    except BaseException as exc:  # noqa: BLE001
        raise failure("compile", exc, ctx.path, f"compiled backward of call {index} raised") from None
    g_compiled = equivalence.collect_grads(args, owner)
    equivalence.zero_grads(args, owner)
    return equivalence.compare_grads(g_eager, g_compiled, index, override)
