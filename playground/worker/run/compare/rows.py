"""One report row of a comparison (`Comparison`), and the row of a value that could not be
compared: said so, never counted as a mismatch. Worker-side.
"""

from __future__ import annotations

from typing import Any

from playground.engine.report import Comparison

#: Longest note; notes quote the user's values.
MAX_NOTE = 200


def row(name: str, call: int, ok: bool, note: str = "", **fields: Any) -> Comparison:
    """One report row (its note cut to MAX_NOTE); `fields`: Comparison's other fields."""
    return Comparison(name=name, call=call, ok=ok, note=note[:MAX_NOTE], **fields)


def not_compared(name: str, call: int, why: str, **fields: Any) -> Comparison:
    # Not a mismatch: we could not look, and say so. Counting it as a failure would fail a
    # CI job (--fail-on-mismatch) on something torch.compile did not get wrong.
    return row(name, call, True, f"not compared: {why}", compared=False, **fields)
