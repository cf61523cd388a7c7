"""The equivalence phase: each call's outputs, mutated inputs and gradients, eager against
compiled, as one `Equivalence` value. Worker-side."""

from __future__ import annotations

from typing import Any

import torch

from playground.engine.report import Equivalence
from playground.worker import equivalence, gradients
from playground.worker.calls import CallRecord
from playground.worker.context import RunContext
from playground.worker.loading import Loaded


def check(ctx: RunContext, records: tuple[CallRecord, ...], loaded: Loaded) -> Equivalence:
    override, tolerance_notes = equivalence.validate_tolerance(loaded.module.__dict__.get("TOLERANCE"))
    ctx.notes += tolerance_notes
    ctx.progress("equivalence", "comparing values")
    outputs: list[dict[str, Any]] = []
    for rec in records:
        outputs += _compare_outputs(rec, override)
    loss_fn = loaded.module.__dict__.get("loss")
    grads: list[dict[str, Any]] = []
    grad_note = ""
    for rec in records:
        ctx.progress("gradients", f"checking gradients of call {rec.index}", rec.index)
        if rec.eager_grads is None:
            grad_note = "no gradients: nothing in the output requires grad"
            continue
        grads += gradients.compare_compiled(
            ctx, rec.index, rec.eager_grads, rec.compiled_out, rec.compiled_args, loss_fn, loaded.params_owner, override
        )
    ok = all(o["ok"] for o in outputs) and all(g["ok"] for g in grads)
    return Equivalence.from_dict({"ok": ok, "outputs": outputs, "grads": grads, "note": grad_note if not grads else ""})


def _compare_outputs(rec: CallRecord, override: Any) -> list[dict[str, Any]]:
    """The call's outputs; and its arguments too when either run mutated them in place."""
    found = equivalence.compare_values(rec.eager_out, rec.compiled_out, rec.index, override)
    if _changed(rec.snapshot, rec.eager_args) or _changed(rec.snapshot, rec.compiled_args):
        found += equivalence.compare_values(
            rec.eager_args, rec.compiled_args, rec.index, override, root="input (mutated)"
        )
    return found


def _changed(before: Any, after: Any) -> bool:
    for (_, b), (_, a) in zip(equivalence.leaves(before, "input"), equivalence.leaves(after, "input")):
        if isinstance(b, torch.Tensor) and isinstance(a, torch.Tensor):
            if b.shape != a.shape or not torch.equal(b.detach().cpu(), a.detach().cpu()):
                return True
    return False
