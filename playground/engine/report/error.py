"""Why a run did not finish: the kind of failure, torch's or the snippet's exception, the line."""

from __future__ import annotations

from dataclasses import dataclass

from playground.engine.report.breaks import GraphBreak
from playground.engine.report.wire import Wire, absent_if_empty, absent_if_none, wire


@dataclass(frozen=True)
class RunError(Wire):
    kind: str = "worker"  # "compile" | "snippet" | "worker" | "settings"
    type: str = ""
    message: str = ""
    line: int | None = None
    detail: str = ""
    #: The graph break fullgraph=True refused, when that is what this error is: the run's
    #: finding rather than a failure (the worker reads it from torch's text: capture/refusals.py).
    refused: GraphBreak | None = wire(None, omit=absent_if_none("refused"))
    #: torch's words naming the package a registered backend lacks (`Please install apache-tvm
    #: to use the tvm backend`), when that is why the backend failed.
    missing_package: str = wire("", omit=absent_if_empty("missing_package"))

    def blamed(self, program: bool = False) -> str:
        """Whose error, in words: a program's own exception is the program's (`kind` stays
        "snippet" on the wire: the user's code, as the contract names it)."""
        return "program" if program and self.kind == "snippet" else self.kind

    def one_line(self, program: bool = False) -> str:
        where = f" (line {self.line})" if self.line else ""
        return f"{self.blamed(program)} error{where}: {self.type}: {self.message}".strip()
