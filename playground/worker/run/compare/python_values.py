"""Leaves that are Python values rather than tensors: numbers (ints exactly, floats and complex
within float64 tolerances), the objects' own `==` when it answers a bool, and an object's
attributes when `==` is identity. None of these raise, whatever the snippet's classes do.
Worker-side.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import torch

from playground.engine.report import Comparison
from playground.worker.run.compare.rows import row
from playground.worker.run.compare.tensor_diff import finite
from playground.worker.run.compare.tolerances import tolerance_for
from playground.worker.run.spine.safe_text import describe_exc, safe_repr, type_name


def _number_diff(e: float, a: float, rtol: float, atol: float) -> tuple[bool, float | None, float | None]:
    """(ok, |e - a|, relative) for two floats; NaN equals NaN, inf equals the same inf."""
    if math.isnan(e) or math.isnan(a):
        return math.isnan(e) and math.isnan(a), None, None
    if e == a:
        return True, 0.0, 0.0
    diff = abs(e - a)
    rel = diff / abs(e) if e != 0 else None
    ok = math.isfinite(diff) and diff <= atol + rtol * abs(e)
    return ok, finite(diff), None if rel is None else finite(rel)


def _as_pairs(e: Any, a: Any) -> list[tuple[float, float]] | None:
    """Two numbers as (eager, compiled) float pairs (two for complex), or None if they will not convert."""
    try:
        if isinstance(e, numbers.Real):
            return [(float(e), float(a))]
        ce, ca = complex(e), complex(a)
        return [(ce.real, ca.real), (ce.imag, ca.imag)]
    except BaseException:  # noqa: BLE001 - a Number subclass without __float__/__complex__
        return None


def compare_number(path: str, e: Any, a: Any, call: int, override: dict[str, float] | None) -> Comparison | None:
    """int/bool exactly; float and complex within float64 tolerances, NaN equal to NaN."""
    kind = type_name(e)
    if isinstance(e, numbers.Integral):
        ok = int(e) == int(a)
        diff = abs(int(e) - int(a))
        max_abs = float(diff) if diff < 2**1000 else None
        note = "" if ok else f"{safe_repr(a)} != eager {safe_repr(e)}"
        return row(path, call, ok, note, dtype=kind, max_abs=max_abs, max_rel=0.0 if ok else None)
    pairs = _as_pairs(e, a)
    if pairs is None:
        return None
    rtol, atol = tolerance_for(torch.float64, override)
    results = [_number_diff(x, y, rtol, atol) for x, y in pairs]
    ok = all(r[0] for r in results)
    abs_parts = [r[1] for r in results]
    max_abs = None if None in abs_parts else max(abs_parts)  # type: ignore[type-var]
    rel_parts = [r[2] for r in results]
    max_rel = None if None in rel_parts else max(rel_parts)  # type: ignore[type-var]
    note = "" if ok else f"{safe_repr(a)} != eager {safe_repr(e)}"
    if ok and any(math.isnan(x) for x, _ in pairs):
        note = "NaN on both sides, counted equal"
    return row(path, call, ok, note, dtype=kind, max_abs=max_abs, max_rel=max_rel, atol=atol, rtol=rtol)


def eq_verdict(e: Any, a: Any) -> bool | str:
    """e == a as a bool, or why the objects' own equality could not say."""
    try:
        result = e == a
    except BaseException as exc:  # noqa: BLE001 - the user's __eq__ may raise anything
        return f"{type_name(e)}.__eq__ raised {describe_exc(exc)}"
    if isinstance(result, bool):
        return result
    if isinstance(result, torch.Tensor):
        return f"{type_name(e)}.__eq__ returned a tensor, not a bool"
    try:
        return bool(result)
    except BaseException as exc:  # noqa: BLE001 - numpy arrays and the like refuse bool()
        return f"{type_name(e)}.__eq__ returned a {type_name(result)} whose bool() raised {describe_exc(exc)}"


def attributes(value: Any) -> dict[str, Any] | None:
    """An object's instance attributes (__dict__ and __slots__), or None when it has none to read."""
    found: dict[str, Any] = {}
    has_state = False
    try:
        state = object.__getattribute__(value, "__dict__")
        if isinstance(state, dict):
            found.update(state)
            has_state = True
    except BaseException:  # noqa: BLE001 - no __dict__, or a hostile descriptor
        pass
    for cls in type(value).__mro__:
        has_state = has_state or ("__slots__" in cls.__dict__ and cls is not object)
        slots = cls.__dict__.get("__slots__", ())
        for slot in [slots] if isinstance(slots, str) else slots:
            if slot in ("__dict__", "__weakref__") or slot in found:
                continue
            try:
                found[slot] = object.__getattribute__(value, slot)
            except BaseException:  # noqa: BLE001 - an unset slot
                continue
    return found if has_state else None
