"""Two tensor leaves, eager and compiled, compared: structure first (shape, dtype, layout,
device), then the values, measured in float64 against the dtype's tolerance. Never raises: a
tensor it cannot read is "not compared". Worker-side.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import torch

from playground.engine.report import Comparison
from playground.worker.run.compare.rows import MAX_NOTE, not_compared, row
from playground.worker.run.compare.tolerances import tolerance_for
from playground.worker.run.spine.leaves import plain
from playground.worker.run.spine.safe_text import describe_exc


def finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def dtype_name(dtype: Any) -> str:
    return str(dtype).replace("torch.", "")


def _layout_name(t: torch.Tensor) -> str:
    if t.is_nested:
        return "nested"
    return dtype_name(t.layout).lstrip("_")


def _nested_flat(e: torch.Tensor, a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor] | str:
    """Both nested tensors as flat dense tensors, or why they differ in structure."""
    ec, ac = e.unbind(), a.unbind()
    if len(ec) != len(ac):
        return f"nested tensor of {len(ac)} components != eager {len(ec)}"
    for i, (x, y) in enumerate(zip(ec, ac)):
        if x.shape != y.shape:
            return f"component {i} shape {tuple(y.shape)} != eager {tuple(x.shape)}"
    if not ec:
        return torch.zeros(0, dtype=e.dtype), torch.zeros(0, dtype=a.dtype)
    flat = [torch.cat([plain(c).reshape(-1) for c in comps]) for comps in (ec, ac)]
    return flat[0], flat[1]


def compare_tensors(
    name: str, expected: torch.Tensor, actual: torch.Tensor, call: int, override: dict[str, float] | None
) -> Comparison:
    """One entry for a tensor leaf. Never raises: a tensor it cannot read is 'not compared'."""
    try:
        return _compare_tensors(name, expected, actual, call, override)
    except BaseException as exc:  # noqa: BLE001 - subclasses and exotic layouts may refuse anything
        return not_compared(name, call, f"reading the tensors raised {describe_exc(exc)}")


def _compare_tensors(
    name: str, expected: torch.Tensor, actual: torch.Tensor, call: int, override: dict[str, float] | None
) -> Comparison:
    entry = row(name, call, False, dtype=dtype_name(expected.dtype))
    if expected.is_nested != actual.is_nested:
        return replace(entry, note=f"layout {_layout_name(actual)} != eager {_layout_name(expected)}")
    if not expected.is_nested and expected.shape != actual.shape:
        return replace(entry, note=f"shape {tuple(actual.shape)} != eager {tuple(expected.shape)}")
    # Differences that still leave values worth measuring: reported, and the leaf fails.
    problems = []
    if expected.dtype != actual.dtype:
        problems.append(f"dtype {dtype_name(actual.dtype)} != eager {dtype_name(expected.dtype)}")
    if _layout_name(expected) != _layout_name(actual):
        problems.append(f"layout {_layout_name(actual)} != eager {_layout_name(expected)}")
    if expected.device.type != actual.device.type:
        problems.append(f"device {actual.device} != eager {expected.device}")
    if expected.is_meta or actual.is_meta:
        note = "; ".join([*problems, "not compared: a meta tensor holds no values"])
        return replace(entry, compared=False, ok=not problems, note=note)
    if expected.is_nested:
        flat = _nested_flat(expected, actual)
        if isinstance(flat, str):
            return replace(entry, note=flat)
        e, a = flat
    else:
        e, a = plain(expected), plain(actual)
    entry = _measure(entry, e, a, override)
    if problems:
        note = "; ".join([*problems, entry.note] if entry.note else problems)[:MAX_NOTE]
        entry = replace(entry, ok=False, note=note)
    return entry


def _measure(entry: Comparison, e: torch.Tensor, a: torch.Tensor, override: dict[str, float] | None) -> Comparison:
    """`entry` with max_abs, max_rel and ok for two dense CPU tensors of the same shape."""
    e_float = e.dtype.is_floating_point or e.dtype.is_complex
    a_float = a.dtype.is_floating_point or a.dtype.is_complex
    rtol, atol = tolerance_for(e.dtype if e_float else a.dtype, override)
    entry = replace(entry, rtol=rtol, atol=atol)
    if e.numel() == 0:
        return replace(entry, max_abs=0.0, max_rel=0.0, ok=True)
    # Most leaves hold no NaN or infinity: measured without the masks those need, and a slice
    # at a time (fresh float64 copies of a program's 50 MB logits cost more in page faults than
    # in arithmetic: 0.34 s a leaf whole, 0.03 s in slices). The answer is the same.
    floating = e_float or a_float
    try:
        # torch.equal is False where a NaN is; equal infinities measure 0 on the masked path too.
        if rtol >= 0 and atol >= 0 and e.dtype == a.dtype and torch.equal(e, a):
            return replace(entry, max_abs=0.0, max_rel=0.0, ok=True)
        measured = _measure_finite(e, a, rtol, atol)
    except Exception:  # noqa: BLE001 - a dtype without isfinite or equal here (float8, complex32)
        measured = None
    if measured is None:
        return _measure_any(entry, e, a, rtol, atol, floating)
    max_abs, max_rel, ok = measured
    entry = replace(entry, max_abs=finite(max_abs), max_rel=finite(max_rel))
    return replace(entry, ok=ok) if floating else _exact(entry, e, a)


#: Elements per slice of `_measure_finite` (2 MB of float64: the cache's size, measured fastest).
SLICE = 1 << 18


def _all_finite(t: torch.Tensor) -> bool:
    if not (t.dtype.is_floating_point or t.dtype.is_complex):
        return True
    return bool(torch.isfinite(t).all())


def _wide(e: torch.Tensor, a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    wide = torch.complex128 if (e.dtype.is_complex or a.dtype.is_complex) else torch.float64
    return e.to(wide), a.to(wide)


def _exact(entry: Comparison, e: torch.Tensor, a: torch.Tensor) -> Comparison:
    """Integers and bools are exact; int64 beyond 2**53 rounds in float64, so compare as int64."""
    return replace(entry, ok=bool(torch.equal(e.to(torch.int64), a.to(torch.int64))))


def _measure_finite(e: torch.Tensor, a: torch.Tensor, rtol: float, atol: float) -> tuple[float, float, bool] | None:
    """(max_abs, max_rel, ok) as `_measure_any` gives them, slice by slice; None where either
    side holds a NaN or an infinity, or a difference overflows (those take `_measure_any`)."""
    flat_e, flat_a = e.reshape(-1), a.reshape(-1)
    tiny = torch.finfo(torch.float64).tiny
    max_abs = max_rel = 0.0
    ok = True
    for start in range(0, flat_e.numel(), SLICE):
        e_part, a_part = flat_e[start : start + SLICE], flat_a[start : start + SLICE]
        if not (_all_finite(e_part) and _all_finite(a_part)):
            return None
        e64, a64 = _wide(e_part, a_part)  # the slice itself where it is float64: nothing in place on them
        diff = torch.abs(e64 - a64)
        mag = e64.abs()
        max_abs = max(max_abs, float(diff.max()))
        if math.isinf(max_abs):
            return None  # a difference past float64's range: the masked path says what it is
        ok = ok and not bool((diff > mag * rtol + atol).any())
        zero = mag == 0
        rel = diff.div_(mag.clamp_min_(tiny)).masked_fill_(zero, 0.0)
        max_rel = max(max_rel, float(rel.max()))
    return max_abs, max_rel, ok


def _measure_any(
    entry: Comparison, e: torch.Tensor, a: torch.Tensor, rtol: float, atol: float, floating: bool
) -> Comparison:
    e64, a64 = _wide(e, a)
    both_nan = torch.isnan(e64) & torch.isnan(a64)
    same_inf = torch.isinf(e64) & (e64 == a64)
    diff = (e64 - a64).abs()
    diff = torch.where(both_nan | same_inf, torch.zeros_like(diff), diff)
    mag = e64.abs()
    rel = torch.where(mag > 0, diff / mag.clamp_min(torch.finfo(torch.float64).tiny), diff * 0)
    # nan_to_num's default turns inf into the largest float: keep it infinite, so finite says None.
    entry = replace(
        entry,
        max_abs=finite(float(torch.nan_to_num(diff, nan=math.inf, posinf=math.inf).max())),
        max_rel=finite(float(torch.nan_to_num(rel, nan=math.inf, posinf=math.inf).max())),
    )
    if not floating:
        return _exact(entry, e, a)
    # An infinity on one side only: atol + rtol * inf would let any value pass, so say it plainly.
    lone_inf = (torch.isinf(e64) | torch.isinf(a64)) & ~same_inf
    bad = (diff > atol + rtol * mag) | (torch.isnan(diff) & ~both_nan) | lone_inf
    entry = replace(entry, ok=not bool(bad.any()))
    if bool((torch.isnan(e64) ^ torch.isnan(a64)).any()):
        return replace(entry, note="NaN in one side only")
    if bool(lone_inf.any()):
        return replace(entry, note=f"inf against a different value in {int(lone_inf.sum())} element(s)")
    if bool(both_nan.any()):
        return replace(entry, note=f"NaN on both sides in {int(both_nan.sum())} element(s), counted equal")
    return entry
