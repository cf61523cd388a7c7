"""The equivalence section of a report in words: the verdict, each compared leaf, the notes.

Four verdicts, from best to worst: identical (bit for bit); within tolerance (the dtype's
torch.testing tolerance, or the snippet's TOLERANCE); within rounding (outside the tolerance,
but the compiled error against a float64 run of the same calls stays within k times eager's
own, as PyTorch's accuracy harness judges); differs. A report from before verdicts has none, and
reads "ok"/"FAIL" as it always did.
"""

from __future__ import annotations

from dataclasses import dataclass

from playground.engine.report import Comparison, Equivalence

#: Leaves listed per kind before only the ones that differ are.
SHORT_LIST = 6


@dataclass(frozen=True)
class Row:
    """One compared leaf in words."""

    kind: str  # "value" | "grad" | "state"
    call: int
    name: str
    dtype: str
    result: str  # "identical", "within tolerance", "within rounding", "DIFFERS", "not compared", "ok", "FAIL"
    ok: bool
    max_abs: str  # "1e-05", or "" when not measured
    max_rel: str
    tolerance: str  # "1e-05/1.3e-06" or ""
    detail: str  # the note, where it differs, the float64 errors

    @property
    def diff(self) -> str:
        """ "max_abs 1e-05 max_rel 2e-06", or "n/a"."""
        if not self.max_abs:
            return "n/a"
        return f"max_abs {self.max_abs} max_rel {self.max_rel or 'n/a'}"


def headline(eq: Equivalence) -> str:
    """ "ok (identical)", "ok (within rounding)", "FAIL (differs)", or "ok"/"FAIL" for old reports."""
    word = "ok" if eq.ok else "FAIL"
    return f"{word} ({eq.verdict})" if eq.verdict else word


_MEANINGS = {
    "identical": "compiled matches eager bit for bit",
    "within tolerance": "compiled matches eager within tolerance",
    "within rounding": "compiled differs from eager only by float rounding (judged against float64)",
    "differs": "compiled differs from eager",
}


def meaning(eq: Equivalence) -> str:
    """The verdict as a sentence: "compiled matches eager bit for bit"."""
    return _MEANINGS.get(eq.verdict) or _MEANINGS["within tolerance" if eq.ok else "differs"]


def result(c: Comparison) -> str:
    if not c.compared:
        return "not compared"
    if c.verdict:
        return "DIFFERS" if c.verdict == "differs" else c.verdict
    return "ok" if c.ok else "FAIL"


def _g3(value: float | None) -> str:
    return "" if value is None else f"{value:.3g}"


def detail(c: Comparison) -> str:
    parts = [c.note] if c.note else []
    if c.worst:
        parts.append(c.worst)
    return "; ".join(parts)


def rows(eq: Equivalence, short: bool = True) -> list[Row]:
    """Every leaf in words; with `short`, a kind with more than SHORT_LIST leaves lists only
    those that are not ok."""
    found = []
    for kind, group in (("value", eq.outputs), ("grad", eq.grads), ("state", eq.state)):
        for c in group:
            if short and c.ok and len(group) > SHORT_LIST:
                continue
            tolerance = "" if c.atol is None else f"{c.atol:g}/{c.rtol:g}"
            found.append(
                Row(
                    kind, c.call, c.name, c.dtype, result(c), c.ok, _g3(c.max_abs), _g3(c.max_rel), tolerance, detail(c)
                )
            )
    return found


def footnotes(eq: Equivalence) -> list[str]:
    """The section's notes: the reference, the float64 rule when it was used, the run's note."""
    return [text for text in (eq.reference, eq.rule, eq.note) if text]
