"""One recompile torch's recompiles log reported, and its reasons as the worker read them."""

from __future__ import annotations

from dataclasses import dataclass

from playground.engine.report.wire import Wire, absent_if_empty, wire


@dataclass(frozen=True)
class GuardFailure(Wire):
    """One failed guard of a recompile's reasons (torch's "0/0: <check>  # <comment>" and the
    context lines under it): `entry` the cache entry it failed against (None for a line with
    no entry), `guard` the index of that guard in the entry's `GuardSet.guards` (None when the
    entry's list does not hold it)."""

    entry: str | None = None
    check: str = ""
    comment: str = ""
    context: tuple[str, ...] = ()
    guard: int | None = None


@dataclass(frozen=True)
class Recompile(Wire):
    function: str = ""
    #: torch's reason lines as logged (the contract's key); `failures` holds them read.
    reasons: tuple[str, ...] = ()
    compile_id: str | None = None
    line: int | None = None
    #: The reasons read by the worker (playground/worker/capture/reasons.py): absent when empty.
    failures: tuple[GuardFailure, ...] = wire((), omit=absent_if_empty("failures"))
