"""Why a run did not finish: the kind of failure, torch's or the snippet's exception, the line."""

from __future__ import annotations

from dataclasses import dataclass

from playground.engine.report.wire import Wire


@dataclass(frozen=True)
class RunError(Wire):
    kind: str = "worker"  # "compile" | "snippet" | "worker" | "settings"
    type: str = ""
    message: str = ""
    line: int | None = None
    detail: str = ""

    def one_line(self) -> str:
        where = f" (line {self.line})" if self.line else ""
        return f"{self.kind} error{where}: {self.type}: {self.message}".strip()
