"""Compile time per phase, the worker's half: one row per frame compile, from torch's
own compilation_metrics and the chromium events of its structured trace. Worker-side.
"""

from __future__ import annotations

import json
from typing import Any

from playground.engine.explain import snippet_line
from playground.worker import compat

#: The phases of `compat.phase_times`, in the order a compile runs them.
PHASES = ("dynamo_s", "aot_s", "inductor_s", "codegen_s", "compile_s", "other_s")

Trace = list[tuple[dict[str, Any], Any]]


def compile_phases(
    trace: Trace, calls: list[dict[str, Any]], first_runs: dict[str, float], snippet_path: str
) -> dict[str, Any]:
    """The report's `compile_phases` (one row per frame compile, from torch's own
    compilation_metrics, with the call of inputs() that triggered it) and
    `compile_phase_totals` (sums over the run, and over call 1: the cold first call).
    `calls`: RunCapture.calls; `first_runs`: compile id -> seconds of its graphs' first run."""
    rows: list[dict[str, Any]] = []
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
        during = [c["call"] for c in calls if c["_trace"] <= position]
        file = metrics.get("co_filename") or ""
        rows.append(
            {
                "compile_id": str(metrics.get("compile_id")),
                "function": metrics.get("co_name") or "",
                "line": snippet_line(file, metrics.get("co_firstlineno"), snippet_path),
                "call": during[-1] if during else None,
                # Inductor compiles a backward graph at the first backward: after the calls.
                "pass": "backward" if metrics.get("is_forward") is False else "forward",
                **{k: round(v, 6) for k, v in times.items()},
            }
        )
    _attach_first_runs(rows, first_runs)
    return {"compile_phases": rows, "compile_phase_totals": phase_totals(rows)}


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


def _attach_first_runs(rows: list[dict[str, Any]], runs: dict[str, float]) -> None:
    """Each row's `first_run_s`: the first run of the graphs its frame compile made, measured
    around the backend's callable (outside torch's metrics, so not part of `total_s`). It goes
    to the compile id's first forward row; a backward graph's first run happens inside the
    compiled forward's autograd node, in a backward pass: never in the cold first call."""
    given: set[str] = set()
    for row in rows:
        cid = row["compile_id"]
        if row["pass"] == "forward" and cid not in given:
            given.add(cid)
            row["first_run_s"] = round(runs.get(cid, 0.0), 6)
        else:
            row["first_run_s"] = 0.0


def phase_totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Each phase summed over every frame compile, the whole (`total_s`), and the same whole
    for the compiles made during call 1 (`first_call_s`: what the cold compile time holds).
    `first_run_s` sums the graphs' first runs, and `first_call_run_s` those of call 1: with
    `first_call_s`, what torch's first call spent compiling and then first running."""
    totals: dict[str, Any] = {k: round(sum(r[k] for r in rows), 6) for k in (*PHASES, "total_s")}
    first = [r for r in rows if r.get("call") == 1 and r.get("pass") != "backward"]
    totals["first_call_s"] = round(sum(r["total_s"] for r in first), 6)
    totals["frames"] = len(rows)
    totals["first_run_s"] = round(sum(r.get("first_run_s", 0.0) for r in rows), 6)
    totals["first_call_run_s"] = round(sum(r.get("first_run_s", 0.0) for r in first), 6)
    return totals
