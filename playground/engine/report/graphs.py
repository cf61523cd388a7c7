"""One FX graph handed to the backend, and the code Inductor generated for it."""

from __future__ import annotations

from dataclasses import dataclass

from playground.engine.report.wire import Wire


@dataclass(frozen=True)
class Graph(Wire):
    """One FX graph handed to the backend, and, with Inductor, the code it generated."""

    index: int = 0
    compile_id: str | None = None
    code: str = ""
    op_count: int = 0
    output_code: str | None = None
