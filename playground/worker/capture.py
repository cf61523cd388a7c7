"""Capture of torch's own diagnostics for one run, in the worker process.

Two sources, both torch's: the `graph_breaks`, `recompiles` and `guards` log artifacts (what
TORCH_LOGS prints, formatted by torch's own formatter) and the structured trace (what
TORCH_TRACE writes for tlparse). Breaks are counted from the log records, not from
`counters["graph_break"]` or `explain()`, which both miss some (TORCH_NOTES.md).
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import tempfile
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from playground.engine import explain
from playground.worker import compat, dynamo_code

_BREAK_HEAD = re.compile(
    r"Graph break(?: \(user stack suppressed[^)]*\))? in user code at (?P<file>.*?):(?P<line>\d+)\n"
    r"Graph Break Reason: (?P<rest>.*)",
    re.S,
)
_GB_ID = re.compile(r"/gb/(gb\d+)\.html", re.I)
_RECOMPILE_HEAD = re.compile(r"Recompiling function (?P<fn>\S+) in (?P<file>.*?):(?P<line>\d+)")
_COMPILE_ID = re.compile(r"\[(\d+/\d+)(?:_\d+)?\]")
_LIMIT = re.compile(r"hit config\.(?P<kind>\w+) \((?P<n>\d+)\)\n\s*function: '(?P<fn>[^']*)' \((?P<loc>[^)]*)\)")
_FILE_LINE = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')
_GUARD_LINE = re.compile(r"^[\s|]*\+- (?P<body>[A-Z][A-Z0-9_]*: .*)$")


@dataclass
class _LogRecord:
    artifact: str | None
    message: str
    formatted: str
    name: str
    levelno: int


@dataclass
class RunCapture:
    """What one run's records said. Filled by the handlers while the run executes."""

    snippet_path: str
    records: list[_LogRecord] = field(default_factory=list)
    trace: list[tuple[dict[str, Any], Any]] = field(default_factory=list)
    #: Raw TORCH_TRACE lines (torch's trace formatter), for `check --trace`.
    trace_lines: list[str] = field(default_factory=list)
    graphs: list[dict[str, Any]] = field(default_factory=list)
    #: One note per call of inputs(): its arguments and what torch's cache did (see call_started).
    calls: list[dict[str, Any]] = field(default_factory=list)
    #: What depyf decompiled (None: not asked for in this run) and a word on how it went.
    dynamo_code_items: list[dict[str, Any]] | None = None
    dynamo_code_note: str = ""
    #: compile id -> seconds of the first run of the graphs compiled under it (calls.first_run_timed).
    first_runs: dict[str, float] = field(default_factory=dict)

    # --- the contract's keys ---------------------------------------------------------------

    def log_text(self, artifact: str) -> str:
        return "\n".join(r.formatted for r in self.records if r.artifact == artifact)

    def logs(self) -> dict[str, str]:
        return {a: self.log_text(a) for a in compat.ARTIFACTS}

    def graph_breaks(self) -> tuple[list[dict[str, Any]], int]:
        """Distinct break sites (in first-seen order) and the total number of breaks logged."""
        sites: dict[tuple[str, int | None, str], dict[str, Any]] = {}
        total = 0
        for rec in self.records:
            if rec.artifact != "graph_breaks":
                continue
            parsed = parse_graph_break(rec.message, self.snippet_path)
            if parsed is None:
                continue
            total += 1
            key = (parsed["file"], parsed["line"], parsed["reason"])
            if key in sites:
                sites[key]["count"] += 1
            else:
                parsed["count"] = 1
                sites[key] = parsed
        return list(sites.values()), total

    def recompiles(self) -> list[dict[str, Any]]:
        out = []
        for rec in self.records:
            if rec.artifact != "recompiles":
                continue
            head = _RECOMPILE_HEAD.search(rec.message)
            if head is None:
                continue
            reasons = [line.strip()[2:].strip() for line in rec.message.splitlines() if line.strip().startswith("- ")]
            cid = _COMPILE_ID.search(rec.formatted)
            out.append(
                {
                    "function": head.group("fn"),
                    "reasons": reasons,
                    "compile_id": cid.group(1) if cid else None,
                    "line": _snippet_line(head.group("file"), int(head.group("line")), self.snippet_path),
                }
            )
        return out

    def recompile_limit(self) -> list[str]:
        """ "fn (file:line) after N" for each frame that hit recompile_limit."""
        hits = []
        for rec in self.records:
            if rec.levelno < logging.WARNING:
                continue
            match = _LIMIT.search(rec.message)
            if match:
                loc = match.group("loc")
                short = f"{os.path.basename(loc.rsplit(':', 1)[0])}:{loc.rsplit(':', 1)[-1]}"
                hits.append(f"{match.group('fn')} ({short}) hit {match.group('kind')} ({match.group('n')})")
        return hits

    # --- why it recompiled (explain.py shapes these) ---------------------------------------

    def call_started(self, index: int, target: Any, args: tuple[Any, ...]) -> None:
        """Note where the records stand before call `index`, its arguments, and the cache's
        most recently used entry: what changes across the call is torch's answer to "which
        entry ran"."""
        try:
            code = compat.target_code(target)
            f_locals = compat.frame_locals(target, args)
            named = {k: compat.describe_value(v) for k, v in (f_locals or {}).items() if k != "self"}
            front = (compat.cache_entry_ids(code) or [None])[0]
        except Exception:  # noqa: BLE001 - bookkeeping must not fail the call
            named, front = {}, None
        self.calls.append(
            {
                "call": index,
                "args": named,
                "_trace": len(self.trace),
                "_records": len(self.records),
                "_front": front,
            }
        )

    def call_finished(self, target: Any, args: tuple[Any, ...]) -> None:
        """Which entry served the last started call: one compiled during it that is now first in
        the cache (torch moves the entry that ran to the front), else the front entry when its
        own guards pass these arguments, else none (eager, e.g. after recompile_limit)."""
        if not self.calls:
            return
        try:
            self._call_finished(self.calls[-1], target, args)
        except Exception:  # noqa: BLE001
            self.calls[-1].update(entry=None, status="unknown", why="could not read torch's cache")

    def _call_finished(self, call: dict[str, Any], target: Any, args: tuple[Any, ...]) -> None:
        code = compat.target_code(target)
        compiled = [
            f"{md.get('frame_id')}/{md.get('frame_compile_id')}"
            for md, _ in self.trace[call["_trace"] :]
            if "dynamo_cpp_guards_str" in md
        ]
        limit = any(r.levelno >= logging.WARNING and _LIMIT.search(r.message) for r in self.records[call["_records"] :])
        ids = compat.cache_entry_ids(code)
        front = ids[0] if ids else None
        call["compiled"] = compiled
        accepts = None if front is None else compat.entry_accepts(code, front, compat.frame_locals(target, args))
        if front is not None and front in compiled:
            call.update(entry=front, status="compiled")
        elif accepts:
            call.update(entry=front, status="cached")
        elif accepts is False and (limit or front == call["_front"]):
            # A hit would have moved the passing entry to the front: none passed, none compiled.
            earlier = any("recompile_limit" in c.get("why", "") for c in self.calls[:-1])
            why = (
                "recompile_limit hit on this call"
                if limit
                else "past recompile_limit"
                if earlier
                else "nothing compiled"
            )
            call.update(entry=None, status="eager", why=why)
        else:
            call.update(entry=front, status="unknown", why="the cache gave no signal for this call")

    def explained(self, guards: list[dict[str, Any]]) -> dict[str, Any]:
        """The report's extension fields: recompile_details, recompile_limit_details,
        guard_details, shape_symbols, specializations, call_entries (empty when torch's records
        could not be read: explaining must never cost the run its other results). `guards`:
        what guards() gave (it is read once per report)."""
        try:
            return self._explained(guards)
        except Exception:  # noqa: BLE001
            return {}

    def _explained(self, guards_read: list[dict[str, Any]]) -> dict[str, Any]:
        recompiles = []
        for position, rec in enumerate(self.records):
            if rec.artifact != "recompiles":
                continue
            head = _RECOMPILE_HEAD.search(rec.message)
            cid = _COMPILE_ID.search(rec.formatted)
            # The call whose record range holds this record is the call that triggered it.
            during = [c["call"] for c in self.calls if c["_records"] <= position]
            if head is not None:
                recompiles.append(
                    {
                        "function": head.group("fn"),
                        "compile_id": cid.group(1) if cid else None,
                        "message": rec.message,
                        "call": during[-1] if during else None,
                    }
                )
        calls = [{k: v for k, v in c.items() if not k.startswith("_")} for c in self.calls]
        details = explain.recompile_details(recompiles, calls, self.snippet_path)
        limits = [r.message for r in self.records if r.levelno >= logging.WARNING and _LIMIT.search(r.message)]
        guards = explain.guard_details(guards_read, self.snippet_path)
        events = []
        for md, _ in self.trace:
            for kind in ("create_symbol", "guard_added", "guard_added_fast", "symbolic_shape_specialization"):
                if kind in md and isinstance(md[kind], dict):
                    events.append((kind, f"{md.get('frame_id')}/{md.get('frame_compile_id')}", md[kind]))
        files = compat.trace_filenames() if events else {}
        for call in calls:
            call["summary"] = explain.call_summary(call, details)
        return {
            "recompile_details": details,
            "recompile_limit_details": explain.limit_details(limits, details, self.snippet_path),
            "guard_details": guards,
            "shape_symbols": explain.shape_symbols(events, files, self.snippet_path),
            "specializations": explain.specializations(events, files, self.snippet_path, details, guards),
            "call_entries": calls,
        }

    def metrics(self) -> list[dict[str, Any]]:
        return [md["compilation_metrics"] for md, _ in self.trace if "compilation_metrics" in md]

    def compile_phases(self) -> dict[str, Any]:
        """The report's `compile_phases` (one row per frame compile, from torch's own
        compilation_metrics, with the call of inputs() that triggered it) and
        `compile_phase_totals` (sums over the run, and over call 1: the cold first call)."""
        rows: list[dict[str, Any]] = []
        spans = chromium_spans(self.trace)
        # torch's outermost "dynamo" span ends after the metrics record: the n-th one of a compile
        # id belongs to that id's n-th record.
        outer = {cid: list(s.get("dynamo", [])) for cid, s in _outer_spans(self.trace).items()}
        for position, (md, _) in enumerate(self.trace):
            metrics = md.get("compilation_metrics")
            if not isinstance(metrics, dict):
                continue
            cid = str(metrics.get("compile_id"))
            frame_spans = dict(spans[position].get(cid, {}))
            if outer.get(cid):
                frame_spans["dynamo"] = outer[cid].pop(0)
            times = compat.phase_times(metrics, frame_spans)
            during = [c["call"] for c in self.calls if c["_trace"] <= position]
            file = metrics.get("co_filename") or ""
            rows.append(
                {
                    "compile_id": str(metrics.get("compile_id")),
                    "function": metrics.get("co_name") or "",
                    "line": _snippet_line(file, metrics.get("co_firstlineno"), self.snippet_path),
                    "call": during[-1] if during else None,
                    # Inductor compiles a backward graph at the first backward: after the calls.
                    "pass": "backward" if metrics.get("is_forward") is False else "forward",
                    **{k: round(v, 6) for k, v in times.items()},
                }
            )
        _attach_first_runs(rows, self.first_runs)
        return {"compile_phases": rows, "compile_phase_totals": phase_totals(rows)}

    @contextmanager
    def dumping_dynamo_code(self, enabled: bool) -> Iterator[None]:
        """Around the compiled calls: when `enabled`, depyf writes the code Dynamo made into a
        temporary folder, read into `dynamo_code` on the way out (even when a call raised).
        Off by default: it adds 0.1-0.25 s to a 0.3 s run (measured on 2.13, eager backend)."""
        if not enabled:
            yield
            return
        version = compat.depyf_version()
        if version is None:
            self.dynamo_code_note = "depyf is not installed in the worker's environment: pip install depyf"
            yield
            return
        directory = tempfile.mkdtemp(prefix="compile-playground-depyf-")
        try:
            with compat.dynamo_code_dumped(directory):
                yield
        except Exception as exc:
            if not self._depyf_failed(exc):
                raise
        finally:
            self.dynamo_code_items = dynamo_code.read_dump(directory, self.snippet_path)
            # depyf.prepare_debug swaps Dynamo's bytecode for its own recompiled version while it
            # records: say so, since this run's numbers come from that code.
            self.dynamo_code_note = self.dynamo_code_note or (
                f"decompiled by depyf {version}; while it records, the run executes depyf's "
                "recompiled version of Dynamo's bytecode"
            )
            shutil.rmtree(directory, ignore_errors=True)

    def _depyf_failed(self, exc: Exception) -> bool:
        """A failure inside depyf's own dump (not the snippet's, not torch.compile's) costs only
        the view: say so and keep the run."""
        frames = traceback.extract_tb(exc.__traceback__)
        if frames and "depyf" in frames[-1].filename:
            self.dynamo_code_note = f"depyf failed: {type(exc).__name__}: {exc}"[:300]
            return True
        return False

    def code_fields(self) -> dict[str, Any]:
        """The report's `dynamo_code` (None when not asked for) and `dynamo_code_note`."""
        return {"dynamo_code": self.dynamo_code_items, "dynamo_code_note": self.dynamo_code_note}

    def guard_names(self) -> dict[str, tuple[str, Any]]:
        """compile id -> (function, first line), from torch's compilation_metrics (the last
        record of an id wins)."""
        names = {}
        for m in self.metrics():
            names[str(m.get("compile_id"))] = (m.get("co_name") or "", m.get("co_firstlineno"))
        return names

    def guards(self) -> list[dict[str, Any]]:
        names = self.guard_names()
        out = []
        for md, payload in self.trace:
            if "dynamo_cpp_guards_str" not in md or not isinstance(payload, str):
                continue
            cid = f"{md.get('frame_id')}/{md.get('frame_compile_id')}"
            fn, line = names.get(cid, ("", None))
            out.append(
                {
                    "compile_id": cid,
                    "function": fn,
                    "line": line,
                    "guards": parse_guard_tree(payload),
                }
            )
        return out


#: The phases of `compat.phase_times`, in the order a compile runs them.
PHASES = ("dynamo_s", "aot_s", "inductor_s", "codegen_s", "compile_s", "other_s")


def chromium_spans(trace: list[tuple[dict[str, Any], Any]]) -> list[dict[str, dict[str, float]]]:
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


def _outer_spans(trace: list[tuple[dict[str, Any], Any]]) -> dict[str, dict[str, list[float]]]:
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


def _snippet_line(file: str, line: int | None, snippet_path: str) -> int | None:
    if line is not None and _same_file(file, snippet_path):
        return line
    return None


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.realpath(a) == os.path.realpath(b)
    except (OSError, ValueError):
        return a == b


def snippet_line_in_text(text: str, snippet_path: str) -> int | None:
    """The last `File "<snippet>", line N` in a traceback or message: the innermost snippet
    line involved."""
    line = None
    for match in _FILE_LINE.finditer(text or ""):
        if _same_file(match.group("file"), snippet_path):
            line = int(match.group("line"))
    return line


def parse_graph_break(message: str, snippet_path: str) -> dict[str, Any] | None:
    """One graph_breaks log record as {reason, hint, file, line, gb_id, explanation, hints}."""
    head = _BREAK_HEAD.match(message)
    if head is None:
        return None
    rest = head.group("rest")
    block, _, traceback_text = rest.partition("\nUser code traceback:")
    reason = ""
    explanation = ""
    hints: list[str] = []
    for raw in block.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("Explanation:"):
            explanation = line[len("Explanation:") :].strip()
        elif line.startswith("Hint:"):
            hints.append(line[len("Hint:") :].strip())
        elif line.startswith(("Developer debug context:", "For more details")):
            continue
        elif not reason and not line.startswith("Encountered graph break when attempting"):
            reason = line
    if not reason:
        reason = block.strip().splitlines()[0] if block.strip() else "graph break"
    gb = _GB_ID.search(block)
    gb_id = gb.group(1).upper() if gb else compat.graph_break_ids_by_type().get(reason)
    registry = compat.graph_break_registry().get(gb_id or "", {})
    if not explanation:
        explanation = registry.get("explanation", "")
    if not hints:
        hints = list(registry.get("hints", []))
    file = head.group("file")
    line_no = int(head.group("line"))
    line = _snippet_line(file, line_no, snippet_path)
    if line is None:
        line = snippet_line_in_text(traceback_text, snippet_path)
    return {
        "reason": reason,
        "hint": hints[0] if hints else "",
        "hints": hints,
        "explanation": explanation,
        "gb_id": gb_id,
        "gb_type": registry.get("gb_type") or reason,
        "file": file,
        "line": line,
        "detail": message.split("\nUser code traceback:")[0].strip(),
    }


def parse_guard_tree(text: str) -> list[str]:
    """The guard lines of a TREE_GUARD_MANAGER dump, without the tree's managers."""
    guards = []
    for raw in text.splitlines():
        match = _GUARD_LINE.match(raw)
        if not match:
            continue
        body = match.group("body")
        kind = body.split(":", 1)[0]
        if kind.endswith("GuardManager") or kind in ("GuardManager", "RootGuardManager"):
            continue
        guards.append(body.strip())
    return guards


class _Dispatcher(logging.Handler):
    """The one handler on every torch logger; it forwards to the capture of the run in flight
    and drops records between runs."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.target: RunCapture | None = None
        self.setFormatter(compat.torch_log_formatter())

    def emit(self, record: logging.LogRecord) -> None:
        target = self.target
        if target is None:
            return
        try:
            target.records.append(
                _LogRecord(
                    artifact=compat.artifact_of(record),
                    message=record.getMessage(),
                    formatted=self.format(record),
                    name=record.name,
                    levelno=record.levelno,
                )
            )
        except Exception:  # noqa: BLE001 - a formatting failure must not break the run
            pass


class _TraceDispatcher(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.target: RunCapture | None = None
        self.keep_lines = False
        try:
            from torch._logging._internal import TorchLogsFormatter

            self.setFormatter(TorchLogsFormatter(trace=True))
        except ImportError:  # pragma: no cover
            pass

    def emit(self, record: logging.LogRecord) -> None:
        target = self.target
        if target is None:
            return
        metadata = getattr(record, "metadata", {}) or {}
        payload = getattr(record, "payload", None)
        target.trace.append((metadata, payload))
        if self.keep_lines:
            try:
                target.trace_lines.append(self.format(record))
            except Exception:  # noqa: BLE001
                pass


class Capturer:
    """Installed once per worker: owns the handlers, hands out one RunCapture per run."""

    def __init__(self) -> None:
        compat.enable_artifact_logs()
        self.handler = _Dispatcher()
        self.trace_handler = _TraceDispatcher()
        self._install()

    def _install(self) -> None:
        # set_logs() gives every registered logger its own stderr handler with propagate off:
        # replace them all, so nothing torch logs reaches the worker's stderr or is lost.
        for qname in compat.registered_logger_names():
            logger = logging.getLogger(qname)
            logger.handlers = [self.handler]
        trace = compat.trace_logger()
        trace.handlers = [h for h in trace.handlers if isinstance(h, _TraceDispatcher)] or []
        if self.trace_handler not in trace.handlers:
            trace.addHandler(self.trace_handler)
        trace.setLevel(logging.DEBUG)
        trace.propagate = False

    def begin(self, snippet_path: str, keep_trace_lines: bool = False) -> RunCapture:
        self._install()  # cheap, and survives anything that re-initialised torch logging
        capture = RunCapture(snippet_path=snippet_path)
        self.trace_handler.keep_lines = keep_trace_lines
        self.handler.target = capture
        self.trace_handler.target = capture
        return capture

    def pause(self) -> None:
        """Stop recording until end(): what follows is not part of the run's diagnostics."""
        self.handler.target = None
        self.trace_handler.target = None

    def end(self) -> None:
        self.handler.target = None
        self.trace_handler.target = None
