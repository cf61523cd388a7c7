"""The guard-cost phase: how many guards the target's compiled entries hold, and what evaluating
them costs the timed call, measured after the timing so the timing carries none of it.

A call evaluates its frame's cache entries most recent first until one passes; that sequence is
timed here with each entry's own guard manager (`check(f_locals)`), in blocks, median per call.
torch's `profile_guard_manager` is not used: it flushes the CPU cache before every iteration
and measures a cold worst case tens of times the warm cost (measured, 2.13 and 2.14).
Worker-side.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from playground.engine.report import EntryGuardCount, GuardCost, Timings
from playground.worker import compat
from playground.worker.run.spine.calls import CallsDone, clone_args

#: Blocks of checks, and the time one block aims at.
BLOCKS = 15
BLOCK_S = 0.002


def guard_cost(done: CallsDone, target: Any, timings: Timings | None) -> GuardCost | None:
    """The guard cost of the last call of inputs() (the timed one); None when the target's
    frame has no compiled entry (nothing compiled, or only frames after a break did)."""
    code = compat.target_code(target)
    entries = compat.cache_entries(code)
    if not entries:
        return None
    counts = tuple(EntryGuardCount(str(e.compile_id), compat.guard_count(e)) for e in entries)
    record = done.records[-1]
    f_locals = compat.guard_locals(target, clone_args(record.snapshot))
    base = GuardCost(timed_call=record.index, entries=counts)
    if f_locals is None:
        return replace(base, note="the call's arguments do not bind to the target's signature")
    checked = check_sequence(entries, f_locals)
    known = [c.guards for c in counts[: checked.tried]]
    compiled_us = timings.compiled_ms * 1e3 if timings is not None and timings.compiled_ms else None
    check_us = checked.seconds * 1e6
    return GuardCost(
        timed_call=record.index,
        entries=counts,
        entry=counts[checked.passed].compile_id if checked.passed is not None else None,
        entries_tried=checked.tried,
        guards_evaluated=sum(known) if all(k is not None for k in known) else None,  # type: ignore[misc]
        check_us=round(check_us, 3),
        compiled_us=round(compiled_us, 3) if compiled_us is not None else None,
        share=round(check_us / compiled_us, 4) if compiled_us else None,
        note=""
        if checked.passed is not None
        else "no entry passes these arguments: the call recompiles or runs eagerly",
    )


@dataclass(frozen=True)
class Checked:
    """The checks a call makes: `tried` entries in torch's order, the one that `passed` (its
    index; None: none did), and the `seconds` that sequence of checks takes per call (median;
    `spread` the blocks' interquartile range)."""

    tried: int
    passed: int | None
    seconds: float
    spread: float = 0.0


def check_sequence(entries: list[Any], f_locals: dict[str, Any]) -> Checked:
    """Time what a call with these frame locals checks: each entry's guards, most recent first,
    until one passes."""
    checks = [compat.guard_check(e) for e in entries]
    tried = 0
    passed: int | None = None
    for i, check in enumerate(checks):
        tried += 1
        if _passes(check, f_locals):
            passed = i
            break
    sequence = checks[:tried]
    return Checked(tried, passed, *per_call(lambda: _run(sequence, f_locals)))


def _passes(check: Callable[[dict[str, Any]], bool], f_locals: dict[str, Any]) -> bool:
    try:
        return bool(check(f_locals))
    except Exception:  # noqa: BLE001 - a guard that raises fails, as it does in torch
        return False


def _run(sequence: list[Callable[[dict[str, Any]], bool]], f_locals: dict[str, Any]) -> None:
    for check in sequence:
        if _passes(check, f_locals):
            return


def per_call(fn: Callable[[], None]) -> tuple[float, float]:
    """Seconds per call of `fn`: the median over BLOCKS blocks of about BLOCK_S each, and the
    blocks' interquartile range."""
    fn()
    t0 = time.perf_counter()
    fn()
    one = max(time.perf_counter() - t0, 1e-7)
    n = max(1, min(10_000, int(BLOCK_S / one)))
    enabled = gc.isenabled()
    gc.disable()
    try:
        per_call = []
        for _ in range(BLOCKS):
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            per_call.append((time.perf_counter() - t0) / n)
    finally:
        if enabled:
            gc.enable()
    quartiles = statistics.quantiles(per_call, n=4)
    return statistics.median(per_call), quartiles[2] - quartiles[0]
