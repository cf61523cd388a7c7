"""The tolerances eager and compiled values are compared with: torch.testing.assert_close's
defaults per dtype; a snippet's TOLERANCE overrides them for every floating dtype. Worker-side.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from playground.worker.run.spine.safe_text import safe_repr, type_name

#: torch._dynamo.utils.same's rule, in its two steps: allclose at its default tol (HARNESS_TOL,
#: as atol and rtol, or the dtype's own when looser); else compiled RMSE vs fp64 <= K x eager's
#: RMSE vs fp64 + FLOOR, K = 2, or 3 for float16/bfloat16 values and for tensors under 1,000
#: elements (noise dominates small ones); FLOOR = HARNESS_TOL / 10.
HARNESS_TOL = 1e-4
K_DEFAULT, K_SMALL_OR_HALF, SMALL_NUMEL, FLOOR = 2.0, 3.0, 1000, HARNESS_TOL / 10

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
    """(rtol, atol) for a dtype; exact (0, 0) for integer and bool tensors.

    An override value that is not a finite number >= 0 is ignored here (validate_tolerance
    names it for the report), so a bad TOLERANCE can never crash the comparison."""
    if not (dtype.is_floating_point or dtype.is_complex):
        return (0.0, 0.0)
    rtol, atol = DEFAULT_TOLERANCES.get(dtype, (1.3e-6, 1e-5))
    if override:
        rtol = _tolerance_value(override.get("rtol"), rtol)
        atol = _tolerance_value(override.get("atol"), atol)
    return rtol, atol


def _tolerance_value(value: Any, default: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return default
    value = float(value)
    return value if math.isfinite(value) and value >= 0 else default


def validate_tolerance(value: Any) -> tuple[dict[str, float] | None, list[str]]:
    """The snippet's TOLERANCE, checked: (usable override or None, notes naming each problem)."""
    if value is None:
        return None, []
    if not isinstance(value, dict):
        return None, [f"TOLERANCE ignored: it must be a dict with atol and/or rtol, not {type_name(value)}"]
    notes: list[str] = []
    clean: dict[str, float] = {}
    for key, item in value.items():
        if key not in ("atol", "rtol"):
            notes.append(f"TOLERANCE key {safe_repr(key)} ignored: only atol and rtol are read")
        elif _tolerance_value(item, -1.0) < 0:
            notes.append(f"TOLERANCE {key}={safe_repr(item)} ignored: it must be a finite number >= 0")
        else:
            clean[key] = float(item)
    return (clean or None), notes
