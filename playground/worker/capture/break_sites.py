"""Distinct graph breaks: torch's graph_breaks records grouped by snippet site and break type,
with torch's hint category and the registry's explanation. Worker-side.

One record can hold more than one break: when Dynamo cannot resume after a break it logs the
break, then "*** While handling this graph break, another graph break occurred: ***" and the
break that made it give up (often "graph break in loop", GB7000, which then skips the frame).
The first section is the root break; the record counts for it, and the later ones are kept as
what it `caused`. A site is (file, snippet line, GB id or type), not the free-text reason, so the
"skipped the frame" record and the later records of the same break collapse into one row.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from playground.engine.report import BreakSite
from playground.worker import compat
from playground.worker.capture.records import parse_graph_break
from playground.worker.capture.torchlog import LogRecord

NESTED = "\n*** While handling this graph break, another graph break occurred: ***\n"
_DOC = re.compile(r"(https?://\S+/gb/(gb\d+)\.html)", re.I)


@dataclass(frozen=True)
class Section:
    """One break of a record: its type, what torch said, and its documentation page."""

    gb_type: str
    gb_id: str | None
    explanation: str
    hints: tuple[str, ...]
    doc: str


def sections(detail: str) -> list[Section]:
    """The breaks of one record's text (the part before "User code traceback:")."""
    out = []
    for part in detail.split(NESTED):
        lines = part.splitlines()
        gb_type, explanation, hints = "", "", []
        for i, raw in enumerate(lines):
            text = raw.strip()
            if text.startswith("Explanation:") and not explanation:
                explanation = text[len("Explanation:") :].strip()
                before = [p.strip() for p in lines[:i] if p.strip()]
                gb_type = before[-1] if before else ""
            elif text.startswith("Hint:"):
                hints.append(text[len("Hint:") :].strip())
        doc = _DOC.search(part)
        gb_id = doc.group(2).upper() if doc else compat.graph_break_ids_by_type().get(gb_type)
        if not hints and gb_id:
            hints = list(compat.graph_break_registry().get(gb_id, {}).get("hints", []))
        if gb_type or gb_id:
            out.append(Section(gb_type, gb_id, explanation, tuple(hints), doc.group(1) if doc else ""))
    return out


def categories(hints: tuple[str, ...]) -> tuple[str, ...]:
    """torch's categories whose hint text appears among `hints`."""
    found = {name for name, texts in compat.graph_break_hint_categories().items() for h in hints if h.strip() in texts}
    return tuple(sorted(found))


def break_sites(records: list[LogRecord], snippet_path: str, own_line: bool = False) -> tuple[BreakSite, ...]:
    """The distinct breaks of a run's graph_breaks records, in first-seen order (`own_line`:
    records.parse_graph_break's)."""
    sites: dict[tuple[str, int | None, str], BreakSite] = {}
    for rec in records:
        if rec.artifact != "graph_breaks":
            continue
        parsed = parse_graph_break(rec.message, snippet_path, own_line)
        if parsed is None:
            continue
        found = sections(parsed.detail)
        root = found[0] if found else Section(parsed.reason, parsed.gb_id, parsed.explanation, (), "")
        caused = tuple(s.gb_type for s in found[1:])
        key = (parsed.file, parsed.line, root.gb_id or root.gb_type)
        known = sites.get(key)
        if known is not None:
            more = tuple(c for c in caused if c not in known.caused)
            sites[key] = replace(known, count=known.count + 1, caused=known.caused + more)
            continue
        registry = compat.graph_break_registry().get(root.gb_id or "", {})
        sites[key] = BreakSite(
            file=parsed.file,
            line=parsed.line,
            gb_id=root.gb_id,
            gb_type=root.gb_type or registry.get("gb_type", ""),
            count=1,
            categories=categories(root.hints),
            explanation=root.explanation,
            registry_explanation=registry.get("explanation", ""),
            hints=root.hints,
            caused=caused,
            doc=root.doc,
        )
    return tuple(sites.values())
