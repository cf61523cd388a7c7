"""Eager against compiled: every output leaf and every gradient, with dtype-aware tolerances.

The tolerances follow torch.testing.assert_close's defaults per dtype; a snippet's TOLERANCE
overrides them for every floating dtype. Worker-side (imports torch).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import torch

#: (rtol, atol) as torch.testing.assert_close uses them.
DEFAULT_TOLERANCES: dict[torch.dtype, tuple[float, float]] = {
    torch.float16: (1e-3, 1e-5),
    torch.bfloat16: (1.6e-2, 1e-5),
    torch.float32: (1.3e-6, 1e-5),
    torch.float64: (1e-7, 1e-7),
    torch.complex64: (1.3e-6, 1e-5),
    torch.complex128: (1e-7, 1e-7),
}


def tolerance_for(dtype: torch.dtype, override: dict[str, float] | None) -> tuple[float, float]:
    """(rtol, atol) for a dtype; exact (0, 0) for integer and bool tensors."""
    if not (dtype.is_floating_point or dtype.is_complex):
        return (0.0, 0.0)
    rtol, atol = DEFAULT_TOLERANCES.get(dtype, (1.3e-6, 1e-5))
    if override:
        rtol = float(override.get("rtol", rtol))
        atol = float(override.get("atol", atol))
    return rtol, atol


def leaves(value: Any, path: str = "out") -> Iterator[tuple[str, Any]]:
    """(path, leaf) for every leaf of nested tuples, lists and dicts."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaves(item, f"{path}[{key!r}]")
    elif isinstance(value, (tuple, list)):
        for i, item in enumerate(value):
            yield from leaves(item, f"{path}[{i}]")
    else:
        yield path, value


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def compare_tensors(
    name: str, expected: torch.Tensor, actual: torch.Tensor, call: int, override: dict[str, float] | None
) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "name": name,
        "call": call,
        "dtype": str(expected.dtype).replace("torch.", ""),
        "max_abs": None,
        "max_rel": None,
        "atol": None,
        "rtol": None,
        "ok": False,
        "note": "",
    }
    if expected.shape != actual.shape:
        entry["note"] = f"shape {tuple(actual.shape)} != eager {tuple(expected.shape)}"
        return entry
    if expected.dtype != actual.dtype:
        entry["note"] = f"dtype {actual.dtype} != eager {expected.dtype}"
        return entry
    rtol, atol = tolerance_for(expected.dtype, override)
    entry["rtol"], entry["atol"] = rtol, atol
    if expected.numel() == 0:
        entry.update(max_abs=0.0, max_rel=0.0, ok=True)
        return entry
    e = expected.detach().to("cpu")
    a = actual.detach().to("cpu")
    if e.is_sparse or a.is_sparse:
        e, a = e.to_dense(), a.to_dense()
    if not (e.dtype.is_floating_point or e.dtype.is_complex):
        diff = (e.to(torch.float64) - a.to(torch.float64)).abs()
        entry["max_abs"] = float(diff.max())
        entry["max_rel"] = 0.0 if entry["max_abs"] == 0 else None
        entry["ok"] = bool(torch.equal(e, a))
        return entry
    e64 = e.to(torch.complex128 if e.dtype.is_complex else torch.float64)
    a64 = a.to(e64.dtype)
    both_nan = torch.isnan(e64) & torch.isnan(a64)
    same_inf = torch.isinf(e64) & (e64 == a64)
    diff = (e64 - a64).abs()
    diff = torch.where(both_nan | same_inf, torch.zeros_like(diff), diff)
    mag = e64.abs()
    bad = diff > atol + rtol * mag
    bad = bad | (torch.isnan(diff) & ~both_nan)
    rel = torch.where(mag > 0, diff / mag.clamp_min(torch.finfo(torch.float64).tiny), diff * 0)
    entry["max_abs"] = _finite(float(torch.nan_to_num(diff, nan=math.inf).max()))
    entry["max_rel"] = _finite(float(torch.nan_to_num(rel, nan=math.inf).max()))
    entry["ok"] = not bool(bad.any())
    if torch.isnan(diff).any() and not entry["ok"]:
        entry["note"] = "NaN in one side only"
    elif bool(both_nan.any()):
        entry["note"] = f"NaN on both sides in {int(both_nan.sum())} element(s), counted equal"
    return entry


def compare_values(
    expected: Any, actual: Any, call: int, override: dict[str, float] | None, root: str = "out"
) -> list[dict[str, Any]]:
    """One comparison per leaf of the eager output; structure mismatches are failures."""
    exp_leaves = list(leaves(expected, root))
    act_leaves = list(leaves(actual, root))
    if [p for p, _ in exp_leaves] != [p for p, _ in act_leaves]:
        return [
            {
                "name": root,
                "call": call,
                "ok": False,
                "max_abs": None,
                "max_rel": None,
                "note": "output structure differs from eager",
            }
        ]
    results = []
    for (path, e), (_, a) in zip(exp_leaves, act_leaves):
        if isinstance(e, torch.Tensor) and isinstance(a, torch.Tensor):
            results.append(compare_tensors(path, e, a, call, override))
        elif isinstance(e, torch.Tensor) or isinstance(a, torch.Tensor):
            results.append(
                {
                    "name": path,
                    "call": call,
                    "ok": False,
                    "max_abs": None,
                    "max_rel": None,
                    "note": "tensor on one side only",
                }
            )
        else:
            same = _same_python_value(e, a, override)
            results.append(
                {
                    "name": path,
                    "call": call,
                    "ok": same,
                    "max_abs": None,
                    "max_rel": None,
                    "dtype": type(e).__name__,
                    "note": "" if same else f"{a!r} != eager {e!r}"[:200],
                }
            )
    return results


def _same_python_value(e: Any, a: Any, override: dict[str, float] | None) -> bool:
    if isinstance(e, float) and isinstance(a, (int, float)):
        rtol, atol = tolerance_for(torch.float64, override)
        return (math.isnan(e) and math.isnan(a)) or abs(e - a) <= atol + rtol * abs(e)
    try:
        return bool(e == a)
    except Exception:  # noqa: BLE001 - objects whose == raises compare as different
        return e is a


def default_loss(output: Any) -> torch.Tensor | None:
    """The contract's default loss: the sum of every floating-point tensor in the output."""
    total = None
    for _, leaf in leaves(output):
        if isinstance(leaf, torch.Tensor) and leaf.is_floating_point() and leaf.requires_grad:
            part = leaf.sum()
            total = part if total is None else total + part
    return total


def collect_grads(args: tuple[Any, ...], module: torch.nn.Module | None) -> dict[str, torch.Tensor | None]:
    """Gradients of every input that requires grad (by position) and every parameter (by name)."""
    grads: dict[str, torch.Tensor | None] = {}
    for path, leaf in leaves(args, "input"):
        if isinstance(leaf, torch.Tensor) and leaf.requires_grad:
            grads[path] = None if leaf.grad is None else leaf.grad.detach().clone()
    if module is not None:
        for name, param in module.named_parameters():
            if param.requires_grad:
                grads[name] = None if param.grad is None else param.grad.detach().clone()
    return grads


def zero_grads(args: tuple[Any, ...], module: torch.nn.Module | None) -> None:
    for _, leaf in leaves(args, "input"):
        if isinstance(leaf, torch.Tensor) and leaf.grad is not None:
            leaf.grad = None
    if module is not None:
        module.zero_grad(set_to_none=True)


def compare_grads(
    eager: dict[str, torch.Tensor | None],
    compiled: dict[str, torch.Tensor | None],
    call: int,
    override: dict[str, float] | None,
) -> list[dict[str, Any]]:
    results = []
    for name, e in eager.items():
        a = compiled.get(name)
        label = f"{name}.grad"
        if e is None and a is None:
            continue
        if e is None or a is None:
            results.append(
                {
                    "name": label,
                    "call": call,
                    "ok": False,
                    "max_abs": None,
                    "max_rel": None,
                    "note": "gradient missing in " + ("eager" if e is None else "compiled"),
                }
            )
            continue
        results.append(compare_tensors(label, e, a, call, override))
    return results
