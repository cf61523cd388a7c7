"""A save's waterfall (`timings.save`), worded once for every view: one row per phase, its
start and duration in ms from the client's request, the phases inside the calls indented."""

from __future__ import annotations

from dataclasses import dataclass

from playground.engine.report import INSIDE_PHASES, Report, SaveWaterfall

#: The section's title, as each view heads it.
TITLE = "save waterfall (ms from the request)"

#: Each phase's word (the report's names are the keys).
WORDS: dict[str, str] = {
    "request": "request",
    "fork": "fork",
    "load": "load",
    "trace": "trace",
    "backend": "backend",
    "calls": "calls",
    "diagnostics": "diagnostics",
    "reference": "reference",
    "equivalence": "equivalence",
    "timing": "timing",
}


@dataclass(frozen=True)
class WaterfallRow:
    """One phase as the views draw it: its label (indented when inside another phase), its
    start and duration in ms, and both as shares of the total (0 to 1) for a bar."""

    label: str
    start_ms: float
    duration_ms: float
    start_share: float
    share: float


def rows(save: SaveWaterfall) -> list[WaterfallRow]:
    """The phases in order, each inside phase after the one that holds it."""
    total = save.total_ms or max((p.end_ms for p in save.phases), default=0.0)
    out = []
    for p in save.phases:
        label = WORDS.get(p.name, p.name)
        if p.name in INSIDE_PHASES:
            label = "  " + label
        start = p.start_ms / total if total > 0 else 0.0
        share = p.duration_ms / total if total > 0 else 0.0
        out.append(WaterfallRow(label, p.start_ms, p.duration_ms, min(start, 1.0), min(share, 1.0)))
    return out


def ms(value: float) -> str:
    """Milliseconds to three significant places at most: "0.42", "12.3", "812"."""
    if value >= 100:
        return f"{value:.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def total_words(save: SaveWaterfall) -> str:
    origin = {"sent": "the client's send", "received": "the worker's receipt"}.get(save.origin, "the run's start")
    total = ms(save.total_ms) if save.total_ms is not None else "n/a"
    return f"total {total} ms from {origin} to the report"


def text_lines(report: Report) -> list[str]:
    """check's text report: the title, a row per phase (start, duration), the total."""
    t = report.timings
    save = t.save if t is not None else None
    if save is None or not save.phases:
        return []
    width = max(len(r.label) for r in rows(save))
    lines = [f"{TITLE}:"]
    for r in rows(save):
        lines.append(f"  {r.label:<{width}}  at {ms(r.start_ms):>6}  {ms(r.duration_ms):>7} ms")
    lines.append(f"  {total_words(save)}")
    return lines
