"""Graph break sites in words: where each is, why, how often it fired, and torch's hints."""

from __future__ import annotations

import os

from playground.engine.report import GraphBreak
from playground.engine.wording.line import BAD, DIM, HEADING, HINT, Line, plural


def where(site: GraphBreak) -> str:
    """ "line 10", the file's name when the break is outside the snippet, or "outside the snippet"."""
    if site.line:
        return f"line {site.line}"
    return os.path.basename(site.file) or "outside the snippet"


def hints(site: GraphBreak) -> tuple[str, ...]:
    """Every hint torch gave (reports from before `hints` carry only `hint`)."""
    return tuple(dict.fromkeys(h for h in (*site.hints, site.hint) if h))


def site_lines(site: GraphBreak) -> tuple[Line, ...]:
    """The site's title (where, the reason, how often, torch's id), then torch's explanation
    and its hints under it."""
    title = Line.of(
        f"{where(site)}  ",
        (site.reason or site.gb_type or "graph break", BAD),
        (f"  fired {plural(site.count, 'time')}", DIM),
        (f"  [{site.gb_id}]" if site.gb_id else "", DIM),
        tag=HEADING,
    )
    why = Line.of(f"why: {site.explanation}" if site.explanation else "", depth=1)
    return tuple(
        line for line in (title, why, *(Line.of(f"hint: {h}", tag=HINT, depth=1) for h in hints(site))) if line.pieces
    )
