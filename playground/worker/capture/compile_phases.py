"""Compile time per phase, the worker's half: one row per frame compile, from torch's
own compilation_metrics and the chromium events of its structured trace. Worker-side.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from playground.engine.explain import snippet_line
from playground.engine.report import PHASE_KEYS, CompilePhase, PhaseTotals
from playground.worker import compat
from playground.worker.capture.call_entries import CallNote

#: The phases of `compat.phase_times`, in the order a compile runs them.
PHASES = PHASE_KEYS

Trace = list[tuple[dict[str, Any], Any]]


def compile_phases(
    trace: Trace, calls: list[CallNote], first_runs: dict[tuple[str, int], float], snippet_path: str
) -> tuple[tuple[CompilePhase, ...], PhaseTotals]:
    """The report's `compile_phases` (one row per frame compile, from torch's own
    compilation_metrics, with the call of inputs() that triggered it) and
    `compile_phase_totals` (sums over the run, and over call 1: the cold first call).
    `calls`: RunCapture.calls; `first_runs`: (compile id, which compile of it) -> seconds of
    its graphs' first run."""
    rows: list[CompilePhase] = []
    spans = chromium_spans(trace)
    # torch's outermost "dynamo" span ends after the metrics record: the n-th one of a compile
    # id belongs to that id's n-th record.
    outer = {cid: list(s.get("dynamo", [])) for cid, s in _outer_spans(trace).items()}
    for position, (md, _) in enumerate(trace):
        metrics = md.get("compilation_metrics")
        if not isinstance(metrics, dict):
            continue
        cid = str(metrics.get("compile_id"))
        frame_spans = dict(spans[position].get(cid, {}))
        if outer.get(cid):
            frame_spans["dynamo"] = outer[cid].pop(0)
        times = compat.phase_times(metrics, frame_spans)
        during = [c.call for c in calls if c.trace_at <= position]
        file = metrics.get("co_filename") or ""
        rows.append(
            CompilePhase(
                compile_id=cid,
                function=metrics.get("co_name") or "",
                line=snippet_line(file, metrics.get("co_firstlineno"), snippet_path),
                call=during[-1] if during else None,
                # Inductor compiles a backward graph at the first backward: after the calls.
                pass_="backward" if metrics.get("is_forward") is False else "forward",
                **{k: round(v, 6) for k, v in times.items()},
            )
        )
    rows = _with_first_runs(rows, first_runs)
    return tuple(rows), phase_totals(rows)


def chromium_spans(trace: Trace) -> list[dict[str, dict[str, float]]]:
    """For each trace record, the chromium events (what tlparse draws as the compile timeline)
    that ended since the previous `compilation_metrics` record of the same compile id: compile
    id -> {event name: seconds}. A backward graph compiled later under the same id (Inductor
    compiles it at the first backward) thus never lends its spans to the forward's row."""
    open_: dict[tuple[str, str], list[float]] = {}
    pending: dict[str, dict[str, float]] = {}
    out: list[dict[str, dict[str, float]]] = []
    for md, payload in trace:
        out.append(pending)
        if "compilation_metrics" in md:
            cid = str((md.get("compilation_metrics") or {}).get("compile_id"))
            pending = {k: v for k, v in pending.items() if k != cid}
            continue
        if "chromium_event" not in md:
            continue
        try:
            event = json.loads(payload) if isinstance(payload, str) else payload
            name, phase, ts = event["name"], event["ph"], float(event["ts"])
            cid = str((event.get("args") or {}).get("compile_id"))
        except (ValueError, TypeError, KeyError):
            continue
        if phase == "B":
            open_.setdefault((name, cid), []).append(ts)
        elif phase == "E" and open_.get((name, cid)):
            began = open_[(name, cid)].pop()
            if open_[(name, cid)]:
                continue  # nested in a span of the same name: counted by the outer one
            pending = {**pending, cid: dict(pending.get(cid, {}))}
            pending[cid][name] = pending[cid].get(name, 0.0) + (ts - began) / 1e6
    return out


def _outer_spans(trace: Trace) -> dict[str, dict[str, list[float]]]:
    """compile id -> {"dynamo": [seconds of each outermost compile span, in order]}."""
    began: dict[str, float] = {}
    out: dict[str, dict[str, list[float]]] = {}
    for md, payload in trace:
        if "chromium_event" not in md:
            continue
        try:
            event = json.loads(payload) if isinstance(payload, str) else payload
            if event["name"] != "dynamo":
                continue
            cid = str((event.get("args") or {}).get("compile_id"))
            if event["ph"] == "B":
                began[cid] = float(event["ts"])
            elif event["ph"] == "E" and cid in began:
                out.setdefault(cid, {}).setdefault("dynamo", []).append((float(event["ts"]) - began.pop(cid)) / 1e6)
        except (ValueError, TypeError, KeyError):
            continue
    return out


def _with_first_runs(rows: list[CompilePhase], runs: dict[tuple[str, int], float]) -> list[CompilePhase]:
    """Each row with its `first_run_s`: the first run of the graphs its frame compile made,
    measured around the backend's callable (outside torch's metrics, so not part of `total_s`).
    The k-th row of a compile id is that id's k-th compile (ids restart at 0/0 after
    torch._dynamo.reset()), and only a forward row has one: a backward graph's first run happens
    inside the compiled forward's autograd node, in a backward pass, never in the cold first call."""
    seen: dict[str, int] = {}
    out = []
    for row in rows:
        nth = seen.get(row.compile_id, 0)
        seen[row.compile_id] = nth + 1
        first_run = round(runs.get((row.compile_id, nth), 0.0), 6) if row.pass_ == "forward" else 0.0
        out.append(replace(row, first_run_s=first_run))
    return out


def phase_totals(rows: list[CompilePhase]) -> PhaseTotals:
    """Each phase summed over every frame compile, the whole (`total_s`), and the same whole
    for the compiles made during call 1 (`first_call_s`: what the cold compile time holds).
    `first_run_s` sums the graphs' first runs, and `first_call_run_s` those of call 1: with
    `first_call_s`, what torch's first call spent compiling and then first running."""
    first = [r for r in rows if r.call == 1 and r.pass_ != "backward"]
    return PhaseTotals(
        **{k: round(sum((getattr(r, k) for r in rows), 0.0), 6) for k in (*PHASES, "total_s")},
        first_call_s=round(sum((r.total_s for r in first), 0.0), 6),
        frames=len(rows),
        first_run_s=round(sum((r.first_run_s or 0.0 for r in rows), 0.0), 6),
        first_call_run_s=round(sum((r.first_run_s or 0.0 for r in first), 0.0), 6),
    )
