"""Capture of torch's own diagnostics for one run, in the worker process.

Two sources, both torch's: the `graph_breaks`, `recompiles` and `guards` log artifacts (what
TORCH_LOGS prints, formatted by torch's own formatter) and the structured trace (what
TORCH_TRACE writes for tlparse). Breaks are counted from the log records, not from
`counters["graph_break"]` or `explain()`, which both miss some (TORCH_NOTES.md).
"""

from __future__ import annotations

import logging
import os
import re
from contextlib import AbstractContextManager
from dataclasses import dataclass, field, replace
from typing import Any

from playground.engine.explain import snippet_line
from playground.engine.report import (
    CompilePhase,
    Explanation,
    Graph,
    GraphBreak,
    GuardSet,
    Logs,
    PhaseTotals,
    Recompile,
)
from playground.worker import compat
from playground.worker.capture import call_entries
from playground.worker.capture.anatomy import BackendFacts
from playground.worker.capture.call_entries import CallNote
from playground.worker.capture.compile_phases import compile_phases
from playground.worker.capture.own_frames import OwnFramesOut, trace_record, without_own_frames
from playground.worker.capture.torchlog import COMPILE_ID, LIMIT, RECOMPILE_HEAD, LogRecord

_BREAK_HEAD = re.compile(
    r"Graph break(?: \(user stack suppressed[^)]*\))? in user code at (?P<file>.*?):(?P<line>\d+)\n"
    r"Graph Break Reason: (?P<rest>.*)",
    re.S,
)
_GB_ID = re.compile(r"/gb/(gb\d+)\.html", re.I)
_FILE_LINE = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')
_GUARD_LINE = re.compile(r"^[\s|]*\+- (?P<body>[A-Z][A-Z0-9_]*: .*)$")


@dataclass
class RunCapture:
    """What one run's records said. Filled by the handlers while the run executes."""

    snippet_path: str
    records: list[LogRecord] = field(default_factory=list)
    trace: list[tuple[dict[str, Any], Any]] = field(default_factory=list)
    #: Raw TORCH_TRACE lines (torch's trace formatter), for `check --trace`.
    trace_lines: list[str] = field(default_factory=list)
    #: Each graph handed to the backend, in order (its Inductor code is added when read).
    graphs: list[Graph] = field(default_factory=list)
    #: One note per call of inputs(): its arguments and what torch's cache did (see call_started).
    calls: list[CallNote] = field(default_factory=list)
    #: A program's calls of its compiled callables that compiled something (call_entries.
    #: program_call): what arrived at a recompile, and its program-wide call number. Not the
    #: report's call_entries, which would list every call of a loop of thousands.
    program_calls: list[CallNote] = field(default_factory=list)
    #: (compile id, which compile of that id) -> seconds of the first run of the graphs that
    #: compile made (calls.first_run_timed): ids restart at 0/0 after torch._dynamo.reset().
    first_runs: dict[tuple[str, int], float] = field(default_factory=dict)
    #: compile id -> its compilation_metrics records so far: while a compile of that id runs,
    #: which compile of it this is (the k-th record of an id is the k-th row of compile_phases).
    compiles: dict[str, int] = field(default_factory=dict)
    #: graph index -> what the counting backend saw of that graph (anatomy.py).
    backend_facts: dict[int, BackendFacts] = field(default_factory=dict)
    #: A break in another file (torch's, a library's) keeps its own line there, not the line of
    #: the file run that led to it (a program: its modules and torch's are code it runs too).
    own_break_lines: bool = False

    # --- the contract's keys ---------------------------------------------------------------

    def log_text(self, artifact: str) -> str:
        return "\n".join(r.formatted for r in self.records if r.artifact == artifact)

    def logs(self) -> Logs:
        return Logs(**{a: self.log_text(a) for a in compat.ARTIFACTS})

    def graph_breaks(self) -> tuple[tuple[GraphBreak, ...], int]:
        """Distinct break sites (in first-seen order) and the total number of breaks logged."""
        sites: dict[tuple[str, int | None, str], GraphBreak] = {}
        total = 0
        for rec in self.records:
            if rec.artifact != "graph_breaks":
                continue
            parsed = parse_graph_break(rec.message, self.snippet_path, self.own_break_lines)
            if parsed is None:
                continue
            total += 1
            key = (parsed.file, parsed.line, parsed.reason)
            seen = sites.get(key)
            sites[key] = parsed if seen is None else replace(seen, count=seen.count + 1)
        return tuple(sites.values()), total

    def recompiles(self) -> tuple[Recompile, ...]:
        out = []
        for rec in self.records:
            if rec.artifact != "recompiles":
                continue
            head = RECOMPILE_HEAD.search(rec.message)
            if head is None:
                continue
            reasons = tuple(
                line.strip()[2:].strip() for line in rec.message.splitlines() if line.strip().startswith("- ")
            )
            cid = COMPILE_ID.search(rec.formatted)
            out.append(
                Recompile(
                    function=head.group("fn"),
                    reasons=reasons,
                    compile_id=cid.group(1) if cid else None,
                    line=snippet_line(head.group("file"), int(head.group("line")), self.snippet_path),
                )
            )
        return tuple(out)

    def recompile_limit(self) -> list[str]:
        """ "fn (file:line) after N" for each frame that hit recompile_limit."""
        hits = []
        for rec in self.records:
            if rec.levelno < logging.WARNING:
                continue
            match = LIMIT.search(rec.message)
            if match:
                loc = match.group("loc")
                short = f"{os.path.basename(loc.rsplit(':', 1)[0])}:{loc.rsplit(':', 1)[-1]}"
                hits.append(f"{match.group('fn')} ({short}) hit {match.group('kind')} ({match.group('n')})")
        return hits

    # --- why it recompiled (capture/explain/ shapes these) ----------------------------------

    def call_started(self, index: int, target: Any, args: tuple[Any, ...]) -> None:
        """Before call `index`: its arguments and the cache's front entry (call_entries)."""
        call_entries.call_started(
            self.calls, index, target, args, trace_at=len(self.trace), records_at=len(self.records)
        )

    def call_finished(self, target: Any, args: tuple[Any, ...]) -> None:
        """After the last started call: which entry served it (call_entries)."""
        call_entries.call_finished(self.calls, target, args, self.trace, self.records)

    def explained(self, guards: tuple[GuardSet, ...]) -> Explanation:
        """The report's explanation fields (call_entries.explained); `guards`: what guards() gave."""
        return call_entries.explained(
            self.records, self.trace, self.calls, guards, self.snippet_path, self.program_calls
        )

    def metrics(self) -> list[dict[str, Any]]:
        return [md["compilation_metrics"] for md, _ in self.trace if "compilation_metrics" in md]

    def compile_phases(self) -> tuple[tuple[CompilePhase, ...], PhaseTotals]:
        """The report's `compile_phases` and `compile_phase_totals` (compile_phases.py)."""
        return compile_phases(self.trace, self.calls, self.first_runs, self.snippet_path)

    def guard_names(self) -> dict[str, tuple[str, Any]]:
        """compile id -> (function, first line), from torch's compilation_metrics (the last
        record of an id wins)."""
        names = {}
        for m in self.metrics():
            names[str(m.get("compile_id"))] = (m.get("co_name") or "", m.get("co_firstlineno"))
        return names

    def guards(self) -> tuple[GuardSet, ...]:
        names = self.guard_names()
        out = []
        for md, payload in self.trace:
            if "dynamo_cpp_guards_str" not in md or not isinstance(payload, str):
                continue
            cid = f"{md.get('frame_id')}/{md.get('frame_compile_id')}"
            fn, line = names.get(cid, ("", None))
            guards = parse_guard_tree(payload)
            out.append(GuardSet(compile_id=cid, function=fn, line=line, guards=guards))
        return tuple(out)


def snippet_line_in_text(text: str, snippet_path: str) -> int | None:
    """The last `File "<snippet>", line N` in a traceback or message: the innermost snippet
    line involved."""
    line = None
    for match in _FILE_LINE.finditer(text or ""):
        found = snippet_line(match.group("file"), int(match.group("line")), snippet_path)
        if found is not None:
            line = found
    return line


def parse_graph_break(message: str, snippet_path: str, own_line: bool = False) -> GraphBreak | None:
    """One graph_breaks log record as a break site seen once (None: not a graph break).
    `own_line`: a break in another file than `snippet_path` keeps its line in that file."""
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
    line = snippet_line(file, line_no, snippet_path)
    if line is None and own_line:
        line = line_no
    elif line is None:
        line = snippet_line_in_text(traceback_text, snippet_path)
    return GraphBreak(
        reason=reason,
        hint=hints[0] if hints else "",
        hints=tuple(hints),
        explanation=explanation,
        gb_id=gb_id,
        gb_type=registry.get("gb_type") or reason,
        file=file,
        line=line,
        detail=message.split("\nUser code traceback:")[0].strip(),
    )


def parse_guard_tree(text: str) -> tuple[str, ...]:
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
    return tuple(guards)


class _Dispatcher(logging.Handler):
    """The one handler on every torch logger; it forwards to the capture of the run in flight
    and drops records between runs."""

    def __init__(self) -> None:
        super().__init__(level=logging.DEBUG)
        self.target: RunCapture | None = None
        self._last: logging.LogRecord | None = None
        self.setFormatter(compat.torch_log_formatter())

    def emit(self, record: logging.LogRecord) -> None:
        target = self.target
        # After the code's own set_logs this handler is on an artifact's logger and on its parent
        # too (compat.keep_capture_through_set_logs): one record, met twice on its way up.
        if target is None or record is self._last:
            return
        self._last = record
        try:
            message = without_own_frames(record) or record.getMessage()  # as python prints it
            target.records.append(
                LogRecord(
                    artifact=compat.artifact_of(record),
                    message=message,
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
        if self.keep_lines:  # the trace file is the user's: as TORCH_TRACE writes it
            as_torch = trace_record(metadata, payload, compat.trace_string_table)
            if as_torch is None:
                return
            metadata, payload = as_torch
            record.metadata, record.payload = metadata, payload
        target.trace.append((metadata, payload))
        if "compilation_metrics" in metadata:
            cid = str((metadata.get("compilation_metrics") or {}).get("compile_id"))
            target.compiles[cid] = target.compiles.get(cid, 0) + 1
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
        self._kept: AbstractContextManager[None] | None = None
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

    def begin(self, snippet_path: str, keep_trace_lines: bool = False, env_logs: bool = False) -> RunCapture:
        """The run's capture. `env_logs`: the user's TORCH_LOGS printed as a plain process
        prints it (the run whose output is the user's: not a warm-up, a findings lane or a rerun)."""
        self._install()  # cheap, and survives anything that re-initialised torch logging
        capture = RunCapture(snippet_path=snippet_path)
        self.trace_handler.keep_lines = keep_trace_lines
        self.handler.target = capture
        self.trace_handler.target = capture
        self._kept = compat.keep_capture_through_set_logs(
            self.handler, self.trace_handler, env_logs=env_logs, printed=OwnFramesOut()
        )
        self._kept.__enter__()
        if keep_trace_lines:
            compat.log_torch_version()  # the user's trace file opens as TORCH_TRACE's does
        return capture

    def pause(self) -> None:
        """Stop recording until end(): what follows is not part of the run's diagnostics."""
        self.handler.target = None
        self.trace_handler.target = None

    def end(self) -> None:
        self.handler.target = None
        self.trace_handler.target = None
        if self._kept is not None:
            kept, self._kept = self._kept, None
            kept.__exit__(None, None, None)
