"""What `compile-playground bisect` found: torch's compiler bisector under our verdict.

The contract's JSON: `{"bisection": {backend, subsystem, bisect_number, debug_info, line,
workaround, steps, first_diverging_op}}`, or `{"bisection": null, "reason": ...}` when eager
and compiled agree."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


def _text(data: dict[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) else None


def _number(data: dict[str, Any], key: str) -> int | None:
    value = data.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


@dataclass(frozen=True)
class DivergingOp:
    """The first intermediate value where compiled and eager part (worker/run/bisection/diverging.py).

    `op` is None when every intermediate the method sees agrees; `note` then says what it
    cannot see. `how` names the means used."""

    op: str | None
    how: str = ""
    #: The FX node's name, the snippet line and the innermost frame ("file:line") of its stack.
    node: str | None = None
    line: int | None = None
    source: str | None = None
    #: Which of Dynamo's graphs of the first call (0 is the first), and the largest |eager - compiled|.
    graph: int | None = None
    max_abs_diff: float | None = None
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "node": self.node,
            "line": self.line,
            "source": self.source,
            "graph": self.graph,
            "max_abs_diff": self.max_abs_diff,
            "how": self.how,
            "note": self.note,
        }

    @classmethod
    def from_dict(cls, data: Any) -> DivergingOp | None:
        if not isinstance(data, dict):
            return None

        diff = data.get("max_abs_diff")
        return cls(
            op=_text(data, "op"),
            how=_text(data, "how") or "",
            node=_text(data, "node"),
            line=_number(data, "line"),
            source=_text(data, "source"),
            graph=_number(data, "graph"),
            max_abs_diff=float(diff) if isinstance(diff, int | float) and not isinstance(diff, bool) else None,
            note=_text(data, "note"),
        )

    def words(self) -> str:
        """ "first diverging op: torch.sin (line 29), max |eager - compiled| 1.35"."""
        if self.op is None:
            return f"first diverging op: none found ({self.note or 'every intermediate agrees'})"
        where = f" (line {self.line})" if self.line is not None else (f" ({self.source})" if self.source else "")
        graph = f" in graph {self.graph}" if self.graph else ""
        diff = f", max |eager - compiled| {self.max_abs_diff:.3g}" if self.max_abs_diff is not None else ""
        return f"first diverging op: {self.op}{where}{graph}{diff}"


@dataclass(frozen=True)
class Bisection:
    backend: str
    subsystem: str | None = None
    bisect_number: int | None = None
    debug_info: str | None = None
    #: The snippet line of the op debug_info names (its FX node's stack trace), else None.
    line: int | None = None
    #: `{"config": {KEY: VALUE}}` in --config's syntax, or None when no switch fixes it.
    workaround: dict[str, Any] | None = None
    steps: int = 0
    first_diverging_op: DivergingOp | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "subsystem": self.subsystem,
            "bisect_number": self.bisect_number,
            "debug_info": self.debug_info,
            "line": self.line,
            "workaround": self.workaround,
            "steps": self.steps,
            "first_diverging_op": self.first_diverging_op.to_dict() if self.first_diverging_op else None,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Bisection:
        workaround = data.get("workaround")
        return cls(
            backend=_text(data, "backend") or "",
            subsystem=_text(data, "subsystem"),
            bisect_number=_number(data, "bisect_number"),
            debug_info=_text(data, "debug_info"),
            line=_number(data, "line"),
            workaround=workaround if isinstance(workaround, dict) else None,
            steps=_number(data, "steps") or 0,
            first_diverging_op=DivergingOp.from_dict(data.get("first_diverging_op")),
        )


@dataclass(frozen=True)
class BisectResult:
    bisection: Bisection | None
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        if self.bisection is None:
            return {"bisection": None, "reason": self.reason}
        return {"bisection": self.bisection.to_dict()}

    @classmethod
    def from_event(cls, data: dict[str, Any]) -> BisectResult:
        found = data.get("bisection")
        if isinstance(found, dict):
            return cls(Bisection.from_dict(found))
        reason = data.get("reason")
        return cls(None, reason if isinstance(reason, str) else None)
