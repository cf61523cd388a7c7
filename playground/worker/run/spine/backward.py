"""Gradients of one call on one side: the loss and its backward, right after the forward (a
module that updates buffers in place, BatchNorm's running stats, would otherwise invalidate
what the forward saved by the next call); the contract's default loss; which tensors a backward
writes and their gradients read back. Comparing the two sides' is compare/gradients.py.
Worker-side.
"""

from __future__ import annotations

from typing import Any

import torch

from playground.worker.run.spine.context import RunContext
from playground.worker.run.spine.failures import RunFailure, failure
from playground.worker.run.spine.leaves import is_tensor, leaves
from playground.worker.run.spine.safe_text import describe_exc

Grads = dict[str, torch.Tensor | None]


def loss_of(ctx: RunContext, loss_fn: Any, output: Any, which: str, index: int) -> torch.Tensor | None:
    """The scalar to differentiate (None when nothing in it requires grad)."""
    if loss_fn is None:
        return default_loss(output, ctx.notes)
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
    written = grad_leaves(args, modules)
    saved = [(t, t.grad) for t in written]
    for t in written:
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
        return collect_grads(args, modules), ""
    finally:
        for t, grad in saved:
            t.grad = grad


def _backward_failure(ctx: RunContext, exc: BaseException, side: str, index: int) -> RunFailure:
    kind = "compile" if side == "compiled" else "snippet"
    return failure(kind, exc, ctx.path, f"{side} backward of call {index} raised")


def _loss_part(leaf: torch.Tensor) -> torch.Tensor:
    if leaf.is_nested:
        return torch.cat([c.reshape(-1) for c in leaf.unbind()]).sum()
    try:
        return leaf.sum()
    except Exception:  # noqa: BLE001 - some sparse layouts have no sum(); densify
        return leaf.to_dense().sum()


def default_loss(output: Any, notes: list[str] | None = None) -> torch.Tensor | None:
    """The contract's default loss: the sum of every floating-point tensor in the output that
    requires grad, dataclass fields and namedtuple items included. A leaf that cannot be summed
    is left out and named in `notes` when given."""
    total = None
    for path, leaf in leaves(output):
        if not (is_tensor(leaf) and leaf.is_floating_point() and leaf.requires_grad):
            continue
        try:
            part = _loss_part(leaf)
            total = part if total is None else total + part.to(total.device)
        except Exception as exc:  # noqa: BLE001 - an exotic tensor must not end the gradient check
            if notes is not None:
                notes.append(f"default loss left out {path}: {describe_exc(exc)}")
    return total


def _param_names(modules: list[tuple[str, torch.nn.Module]]) -> list[tuple[str, torch.Tensor]]:
    """(name, parameter) of the snippet's modules: the target's by its own names ("weight"),
    the others' by the name the snippet gave the module ("net.weight")."""
    found: list[tuple[str, torch.Tensor]] = []
    seen: set[int] = set()
    for i, (prefix, module) in enumerate(modules):
        for name, param in module.named_parameters():
            if id(param) in seen:
                continue
            seen.add(id(param))
            found.append((name if i == 0 and prefix in ("model", "fn") else f"{prefix}.{name}", param))
    return found


def grad_leaves(args: tuple[Any, ...], modules: list[tuple[str, torch.nn.Module]]) -> list[torch.Tensor]:
    """Every tensor whose .grad a backward can write: the inputs that require grad, the parameters."""
    found = [leaf for _, leaf in leaves(args, "input") if is_tensor(leaf) and leaf.requires_grad]
    return found + [p for _, p in _param_names(modules)]


def collect_grads(args: tuple[Any, ...], modules: list[tuple[str, torch.nn.Module]]) -> dict[str, torch.Tensor | None]:
    """Gradients of every input that requires grad (by position) and every parameter (by name)."""
    grads: dict[str, torch.Tensor | None] = {}
    for path, leaf in leaves(args, "input"):
        if is_tensor(leaf) and leaf.requires_grad:
            grads[path] = None if leaf.grad is None else leaf.grad.detach().clone()
    for name, param in _param_names(modules):
        if param.requires_grad:
            grads[name] = None if param.grad is None else param.grad.detach().clone()
    return grads
