"""One recompile torch's recompiles log reported."""

from __future__ import annotations

from dataclasses import dataclass

from playground.engine.report.wire import Wire


@dataclass(frozen=True)
class Recompile(Wire):
    function: str = ""
    reasons: tuple[str, ...] = ()
    compile_id: str | None = None
    line: int | None = None
