"""What the snippet printed during the run."""

from __future__ import annotations

from dataclasses import dataclass

from playground.engine.report.wire import Wire, absent_if_none, wire


@dataclass(frozen=True)
class Output(Wire):
    """What the snippet printed during the run (stdout and stderr together, truncated)."""

    text: str = ""
    bytes: int = 0
    truncated: bool = False
    #: What the timed repetitions printed on top (not kept; present only when they printed).
    timing_bytes: int | None = wire(None, omit=absent_if_none("timing_bytes"))
