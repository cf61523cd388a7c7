"""The worker process that ran the snippet."""

from __future__ import annotations

from dataclasses import dataclass

from playground.engine.report.wire import Wire, absent_if_empty, absent_if_none, wire


@dataclass(frozen=True)
class WorkerInfo(Wire):
    """The process that ran the snippet: its pid, its memory, and how runs were isolated."""

    pid: int | None = None
    rss_mb: float | None = None
    isolation: str = wire("", omit=absent_if_empty("isolation"))
    #: The run's largest resident memory (its process, from the kernel's high-water mark).
    peak_rss_mb: float | None = wire(None, omit=absent_if_none("peak_rss_mb"))
