"""A run's graph breaks: each as torch's graph_breaks log reported it, and grouped by site."""

from __future__ import annotations

from dataclasses import dataclass

from playground.engine.report.wire import Wire


@dataclass(frozen=True)
class GraphBreak(Wire):
    """One distinct break site, as torch's graph_breaks log reported it."""

    reason: str = ""
    hint: str = ""
    hints: tuple[str, ...] = ()
    explanation: str = ""
    gb_id: str | None = None
    gb_type: str | None = None
    file: str = ""
    line: int | None = None
    #: "Graph break in user code" (the text of the first log record for this site).
    detail: str = ""
    count: int = 1


@dataclass(frozen=True)
class BreakSite(Wire):
    """One distinct graph break: the records torch logged at one snippet site for one break type
    (`gb_id`, or `gb_type` where the registry has none), `count` of them. `categories` are torch's
    own (graph_break_hints: "FUNDAMENTAL", "USER_ERROR", "SUPPORTABLE", "DYNAMO_BUG"...; empty when
    the break carries only hints specific to it); `explanation` and `hints` are what torch said at
    run time, `registry_explanation` the registry's text for the id; `caused` the breaks this one
    set off while torch handled it (e.g. "graph break in loop": the frame was then skipped)."""

    file: str = ""
    line: int | None = None
    gb_id: str | None = None
    gb_type: str = ""
    count: int = 1
    categories: tuple[str, ...] = ()
    explanation: str = ""
    registry_explanation: str = ""
    hints: tuple[str, ...] = ()
    caused: tuple[str, ...] = ()
    doc: str = ""
