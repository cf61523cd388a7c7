"""Torch's own log text of the run, by log."""

from __future__ import annotations

from dataclasses import dataclass

from playground.engine.report.wire import Wire


@dataclass(frozen=True)
class Logs(Wire):
    graph_breaks: str = ""
    recompiles: str = ""
    guards: str = ""
