"""Gradients of one call on one side: the loss and its backward, right after the forward (a
module that updates buffers in place, BatchNorm's running stats, would otherwise invalidate
what the forward saved by the next call). Worker-side.
"""

from __future__ import annotations

from typing import Any

import torch

from playground.worker.run import comparison
from playground.worker.run.context import RunContext
from playground.worker.run.failures import RunFailure, failure

Grads = dict[str, torch.Tensor | None]


def loss_of(ctx: RunContext, loss_fn: Any, output: Any, which: str, index: int) -> torch.Tensor | None:
    """The scalar to differentiate (None when nothing in it requires grad)."""
    if loss_fn is None:
        return comparison.default_loss(output, ctx.notes)
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


def side_grads(
    ctx: RunContext,
    index: int,
    out: Any,
    args: tuple[Any, ...],
    loss_fn: Any,
    modules: list[tuple[str, torch.nn.Module]],
    side: str,
) -> tuple[Grads | None, str]:
    """One side's gradients for one call: the backward of its loss, read, then every `.grad` put
    back as the call left it, so that the next call (and a training step's own optimizer) sees
    what a plain program making only the calls would. (None, why) when there are none."""
    leaves = comparison.grad_leaves(args, modules)
    saved = [(t, t.grad) for t in leaves]
    for t in leaves:
        t.grad = None
    try:
        loss = loss_of(ctx, loss_fn, out, side, index)
        if loss is None:
            return None, "no gradients: nothing in the output requires grad"
        try:
            loss.reshape(()).backward()
        except RuntimeError as exc:
            if "backward through the graph a second time" in str(exc):
                # A training step that ran its own backward on what it returned.
                return None, "no gradients: the snippet's own backward already used the output's graph"
            raise _backward_failure(ctx, exc, side, index) from None
        except BaseException as exc:  # noqa: BLE001
            raise _backward_failure(ctx, exc, side, index) from None
        return comparison.collect_grads(args, modules), ""
    finally:
        for t, grad in saved:
            t.grad = grad


def _backward_failure(ctx: RunContext, exc: BaseException, side: str, index: int) -> RunFailure:
    kind = "compile" if side == "compiled" else "snippet"
    return failure(kind, exc, ctx.path, f"{side} backward of call {index} raised")
