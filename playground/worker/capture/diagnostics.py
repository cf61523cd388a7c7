"""The diagnostics phase: what torch's logs and trace said about the calls, read once.

The diagnostics event goes out as soon as the calls have run; the final report reuses what was
read then and reads again only what equivalence added to the capture. Timing records nothing
(the capture is paused), but equivalence can: Inductor compiles a backward graph at the first
compiled backward (new compilation_metrics, chromium spans and output code), and a compile's
warnings may be logged. So each group of fields is re-read only when a record of its kind
arrived after the mark. Worker-side.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any

from playground.engine.report import Report
from playground.worker import compat
from playground.worker.capture import anatomy, break_sites, own_frames, reasons
from playground.worker.capture.records import RunCapture

#: The Report fields read from the capture.
FIELDS: tuple[str, ...] = (
    "graph_count",
    "graph_breaks",
    "graph_break_count",
    "recompiles",
    "recompile_count",
    "recompile_limit_hit",
    "recompile_limit_functions",
    "guards",
    "logs",
    "graphs",
    "explanation",
    "compile_phases",
    "compile_phase_totals",
    "compile_anatomy",
    "break_sites",
)
#: Trace records that change the guards and their explanation (compilation_metrics is compared
#: through the names it gives the guards, see guard_names).
_DYNAMO_KINDS = frozenset(
    {"dynamo_cpp_guards_str", "create_symbol", "guard_added", "guard_added_fast", "symbolic_shape_specialization"}
)


@dataclass(frozen=True)
class _Mark:
    """How far the capture had got when its diagnostics were read."""

    records: int
    trace: int
    graphs: int
    guard_names: dict[str, tuple[str, Any]]


@dataclass(frozen=True)
class Diagnostics:
    """The diagnostics of a run as read at one point: the typed fields, the groups of Report
    fields they came from (for re-reading only what changed) and the mark."""

    report: Report
    groups: dict[str, Mapping[str, Any]]
    mark: _Mark

    def apply(self, report: Report) -> Report:
        """`report` with these diagnostics' fields."""
        return replace(report, **{name: getattr(self.report, name) for name in FIELDS})


def read(capture: RunCapture) -> Diagnostics:
    """Everything, read from the capture as it stands."""
    records = _from_records(capture)
    return _assemble(capture, records, _from_dynamo(capture), _from_trace(capture))


def refresh(capture: RunCapture, earlier: Diagnostics) -> Diagnostics:
    """The diagnostics now, re-reading only the groups that records since `earlier` touch."""
    mark = earlier.mark
    groups = earlier.groups
    new_trace = capture.trace[mark.trace :]
    if len(capture.records) == mark.records and not new_trace and len(capture.graphs) == mark.graphs:
        return earlier
    records_changed = any(
        r.artifact in compat.ARTIFACTS or r.levelno >= logging.WARNING for r in capture.records[mark.records :]
    )
    dynamo_changed = (
        records_changed
        or any(_DYNAMO_KINDS.intersection(md) for md, _ in new_trace)
        or capture.guard_names() != mark.guard_names
    )
    return _assemble(
        capture,
        _from_records(capture) if records_changed else groups["records"],
        _from_dynamo(capture) if dynamo_changed else groups["dynamo"],
        _from_trace(capture),
    )


def _assemble(capture: RunCapture, *groups: Mapping[str, Any]) -> Diagnostics:
    records, dynamo, trace = groups
    report = Report(
        **records,
        **dynamo,
        **trace,
        compile_anatomy=anatomy.anatomy(capture.trace, capture.graphs, capture.backend_facts),
        break_sites=break_sites.break_sites(capture.records, capture.snippet_path, capture.own_break_lines),
    )
    # The reasons read against the entries' guards: the two groups may come from different marks.
    report = replace(report, recompiles=reasons.read(report.recompiles, report.guards))
    mark = _Mark(len(capture.records), len(capture.trace), len(capture.graphs), capture.guard_names())
    named = {"records": records, "dynamo": dynamo, "trace": trace}
    return Diagnostics(report, named, mark)


def _from_records(cap: RunCapture) -> Mapping[str, Any]:
    """The Report fields that torch's log artifacts give."""
    breaks, total = cap.graph_breaks()
    recompiles = cap.recompiles()
    limit = cap.recompile_limit()
    return {
        "graph_breaks": breaks,
        "graph_break_count": total,
        "recompiles": recompiles,
        "recompile_count": len(recompiles),
        "recompile_limit_hit": bool(limit),
        "recompile_limit_functions": tuple(limit),
        "logs": cap.logs(),
    }


def _from_dynamo(cap: RunCapture) -> Mapping[str, Any]:
    """The guards, and why it recompiled (the report's explanation)."""
    guards = cap.guards()
    return {"guards": guards, "explanation": cap.explained(guards)}


def _from_trace(cap: RunCapture) -> Mapping[str, Any]:
    """The graphs with Inductor's code for each, and compile time per phase."""
    codes_by_id: dict[str, list[str]] = {}
    for md, payload in cap.trace:
        if "inductor_output_code" in md and isinstance(payload, str):
            cid = f"{md.get('frame_id')}/{md.get('frame_compile_id')}"
            codes_by_id.setdefault(cid, []).append(payload)
    graphs = []
    for graph in cap.graphs:
        codes = codes_by_id.get(graph.compile_id or "")
        joined = "\n\n# ---- next kernel module ----\n\n".join(codes) if codes else None
        graphs.append(replace(graph, output_code=joined))
    phases, totals = cap.compile_phases()
    return {
        "graph_count": len(cap.graphs),
        "graphs": tuple(graphs),
        "compile_phases": phases,
        "compile_phase_totals": totals,
    }


def trace_payload(cap: RunCapture) -> dict[str, Any]:
    """torch's structured trace for tlparse: the lines and the string table."""
    strings = own_frames.trace_names(compat.trace_string_table())
    return {"lines": list(cap.trace_lines), "strings": [list(p) for p in strings]}


assert set(FIELDS) <= {f.name for f in fields(Report)}
