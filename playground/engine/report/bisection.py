"""What `compile-playground bisect` found: torch's compiler bisector under our verdict.

The contract's JSON: `{"bisection": {backend, subsystem, bisect_number, debug_info, line,
workaround, steps, first_diverging_op}}`, or `{"bisection": null, "reason": ...}` when eager
and compiled agree."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


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
    first_diverging_op: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "subsystem": self.subsystem,
            "bisect_number": self.bisect_number,
            "debug_info": self.debug_info,
            "line": self.line,
            "workaround": self.workaround,
            "steps": self.steps,
            "first_diverging_op": self.first_diverging_op,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Bisection:
        def text(key: str) -> str | None:
            value = data.get(key)
            return value if isinstance(value, str) else None

        def number(key: str) -> int | None:
            value = data.get(key)
            return value if isinstance(value, int) and not isinstance(value, bool) else None

        workaround = data.get("workaround")
        return cls(
            backend=text("backend") or "",
            subsystem=text("subsystem"),
            bisect_number=number("bisect_number"),
            debug_info=text("debug_info"),
            line=number("line"),
            workaround=workaround if isinstance(workaround, dict) else None,
            steps=number("steps") or 0,
            first_diverging_op=text("first_diverging_op"),
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
