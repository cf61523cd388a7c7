"""Why it recompiled, the worker's half: which cache entry served each call of inputs(), and the records
of why it recompiled, handed to playground.engine.explain to be put in words. Worker-side.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from playground.engine.report import CallEntry, DynamoFrames, Explanation, GuardSet
from playground.worker import compat
from playground.worker.capture import explain
from playground.worker.capture.torchlog import COMPILE_ID, RECOMPILE_HEAD, LogRecord, hit_limit

#: The trace records that say how shapes were treated (symbols made, guards added, specialized).
_SHAPE_KINDS = ("create_symbol", "guard_added", "guard_added_fast", "symbolic_shape_specialization")

Trace = list[tuple[dict[str, Any], Any]]


@dataclass
class CallNote:
    """One call of inputs() while the run is in flight: its arguments from call_started, then
    which entry served it from call_finished. `trace_at`, `records_at` and `front` (where the
    records stood and the cache's front entry when the call began) never leave the worker."""

    call: int
    args: tuple[tuple[str, str], ...]
    trace_at: int
    records_at: int
    front: str | None
    compiled: tuple[str, ...] = ()
    entry: str | None = None
    status: str | None = None
    why: str = ""
    #: Where the records stood when the call returned (None: still running, or not noted).
    records_end: int | None = None

    def as_entry(self) -> CallEntry:
        """The report's value for this call (its summary is added once the recompiles are read)."""
        return CallEntry(
            call=self.call, args=self.args, compiled=self.compiled, entry=self.entry, status=self.status, why=self.why
        )


def call_started(
    calls: list[CallNote], index: int, target: Any, args: tuple[Any, ...], *, trace_at: int, records_at: int
) -> None:
    """Note where the records stand before call `index`, its arguments, and the cache's most
    recently used entry: what changes across the call is torch's answer to "which entry ran"."""
    try:
        code = compat.target_code(target)
        f_locals = compat.frame_locals(target, args)
        named = tuple((k, compat.describe_value(v)) for k, v in (f_locals or {}).items() if k != "self")
        front = (compat.cache_entry_ids(code) or [None])[0]
    except Exception:  # noqa: BLE001 - bookkeeping must not fail the call
        named, front = (), None
    calls.append(CallNote(call=index, args=named, trace_at=trace_at, records_at=records_at, front=front))


def program_call(
    capture: Any, number: int, target: Any, args: tuple[Any, ...], kwargs: dict[str, Any], at: tuple[int, int]
) -> None:
    """After a program's call of a compiled callable (its program-wide `number`), begun with
    the trace and records at `at`: where it compiled an entry, a note of it with the arguments
    that arrived, so that a recompile's row says what arrived and at which call (the program's
    calls are not the playground's, so nothing is read before they run)."""
    trace_at, records_at = at
    try:
        compiled = tuple(_cid(md) for md, _ in capture.trace[trace_at:] if "dynamo_cpp_guards_str" in md)
        if not compiled:
            return
        bound = compat.frame_locals(target, args, kwargs) or {}
        named = tuple((k, compat.describe_value(v)) for k, v in bound.items() if k != "self")
    except Exception:  # noqa: BLE001 - bookkeeping must not fail the program's call
        return
    capture.program_calls.append(
        CallNote(
            call=number,
            args=named,
            trace_at=trace_at,
            records_at=records_at,
            front=None,
            compiled=compiled,
            entry=compiled[-1],
            status="compiled",
            records_end=len(capture.records),
        )
    )


def call_finished(
    calls: list[CallNote], target: Any, args: tuple[Any, ...], trace: Trace, records: list[LogRecord]
) -> None:
    """Which entry served the last started call: one compiled during it that is now first in
    the cache (torch moves the entry that ran to the front), else the front entry when its
    own guards pass these arguments, else none (eager, e.g. after recompile_limit)."""
    if not calls:
        return
    try:
        _resolve(calls, target, args, trace, records)
    except Exception:  # noqa: BLE001
        call = calls[-1]
        call.entry, call.status, call.why = None, "unknown", "could not read torch's cache"


def _resolve(calls: list[CallNote], target: Any, args: tuple[Any, ...], trace: Trace, records: list[LogRecord]) -> None:
    call = calls[-1]
    code = compat.target_code(target)
    compiled = tuple(
        f"{md.get('frame_id')}/{md.get('frame_compile_id')}"
        for md, _ in trace[call.trace_at :]
        if "dynamo_cpp_guards_str" in md
    )
    limit = any(hit_limit(r) for r in records[call.records_at :])
    ids = compat.cache_entry_ids(code)
    front = ids[0] if ids else None
    call.compiled = compiled
    accepts = None if front is None else compat.entry_accepts(code, front, compat.guard_locals(target, args))
    if front is not None and front in compiled:
        call.entry, call.status = front, "compiled"
    elif accepts:
        call.entry, call.status = front, "cached"
    elif accepts is False and (limit or front == call.front):
        # A hit would have moved the passing entry to the front: none passed, none compiled.
        earlier = any("recompile_limit" in c.why for c in calls[:-1])
        why = "recompile_limit hit on this call" if limit else "past recompile_limit" if earlier else "nothing compiled"
        call.entry, call.status, call.why = None, "eager", why
    else:
        call.entry, call.status, call.why = front, "unknown", "the cache gave no signal for this call"


def explained(
    records: list[LogRecord],
    trace: Trace,
    calls: list[CallNote],
    guards: tuple[GuardSet, ...],
    snippet_path: str,
    program_calls: list[CallNote] | None = None,
) -> Explanation:
    """The report's explanation: recompile_details, recompile_limit_details, guard_details,
    shape_symbols, specializations, call_entries (empty when torch's records could not be read:
    explaining must never cost the run its other results). `guards`: what RunCapture.guards()
    gave (it is read once per report); `program_calls`: a program's calls that compiled, for
    the recompiles' rows only."""
    try:
        return _explained(records, trace, calls, guards, snippet_path, program_calls or [])
    except Exception:  # noqa: BLE001
        return Explanation()


def _explained(
    records: list[LogRecord],
    trace: Trace,
    calls_noted: list[CallNote],
    guards_read: tuple[GuardSet, ...],
    snippet_path: str,
    program_calls: list[CallNote],
) -> Explanation:
    calls = [c.as_entry() for c in calls_noted]
    details = explain.recompile_details(
        _recompile_records(records, calls_noted or program_calls),
        calls + [c.as_entry() for c in program_calls],
        snippet_path,
    )
    limits = [r.message for r in records if hit_limit(r)]
    guards = explain.guard_details(guards_read, snippet_path)
    events = [
        (kind, f"{md.get('frame_id')}/{md.get('frame_compile_id')}", md[kind])
        for md, _ in trace
        for kind in _SHAPE_KINDS
        if kind in md and isinstance(md[kind], dict)
    ]
    files = compat.trace_filenames() if events else {}
    return Explanation(
        recompiles=details,
        limits=explain.limit_details(limits, details, snippet_path),
        guards=guards,
        symbols=explain.shape_symbols(events, files, snippet_path),
        specializations=explain.specializations(events, files, snippet_path, details, guards),
        calls=tuple(replace(call, summary=explain.call_summary(call, details)) for call in calls),
        frames=_frames(trace),
    )


def _frames(trace: Trace) -> DynamoFrames:
    """torch's counters["frames"], else the structured trace's count. The counter is kept by
    ConvertFrame alone: under fullgraph=True Dynamo calls ConvertFrameAssert directly and the
    counter stays empty however many frames it converted (measured on torch 2.13 and 2.14.1).
    Then each frame compile's dynamo_start is a frame handed, and one whose compilation_metrics
    has no fail_type was converted."""
    total, converted = compat.dynamo_frames()
    if total:
        return DynamoFrames(total, converted)
    started = {_cid(md) for md, _ in trace if "dynamo_start" in md}
    failed = {
        _cid(md)
        for md, _ in trace
        if "compilation_metrics" in md and (md["compilation_metrics"] or {}).get("fail_type")
    }
    return DynamoFrames(len(started), len(started - failed))


def _cid(md: dict[str, Any]) -> str:
    return f"{md.get('frame_id')}/{md.get('frame_compile_id')}"


def _recompile_records(records: list[LogRecord], calls: list[CallNote]) -> list[explain.RecompileRecord]:
    """Each recompiles record with the call that triggered it: the call whose record range holds it."""
    out = []
    for position, rec in enumerate(records):
        if rec.artifact != "recompiles":
            continue
        head = RECOMPILE_HEAD.search(rec.message)
        cid = COMPILE_ID.search(rec.formatted)
        # The innermost call that holds it: a program's nested calls are noted as each ends,
        # so the one that began last among those whose records hold it.
        holding = [c for c in calls if c.records_at <= position and (c.records_end is None or position < c.records_end)]
        during = [c.call for c in sorted(holding, key=lambda c: c.records_at)]
        if head is not None:
            out.append(
                explain.RecompileRecord(
                    function=head.group("fn"),
                    compile_id=cid.group(1) if cid else None,
                    message=rec.message,
                    call=during[-1] if during else None,
                )
            )
    return out
