"""Why it recompiled, where each guard came from, the shape symbols, which entry ran each call
(extension fields; the worker's capture/explain/ builds them)."""

from __future__ import annotations

from dataclasses import dataclass

from playground.engine.report.wire import Wire, absent_if_empty, absent_if_none, wire


@dataclass(frozen=True)
class ReasonRow(Wire):
    """One failing guard of a recompile, per argument: what the entry was built for (`was`),
    what arrived (`now`), and the snippet line the argument came from."""

    arg: str = ""
    guard: str = ""
    was: str = ""
    now: str = ""
    line: int | None = None
    note: str = ""
    #: The cache entries that failed on this argument (newest first).
    entries: tuple[str, ...] = ()


@dataclass(frozen=True)
class RecompileDetail(Wire):
    function: str = ""
    entry: str | None = None
    call: int | None = None
    reasons: tuple[ReasonRow, ...] = ()


@dataclass(frozen=True)
class LimitDetail(Wire):
    """recompile_limit hit: the function, the limit, the argument whose changes used it up."""

    function: str = ""
    config: str = "recompile_limit"
    limit: int = 0
    arg: str = ""
    recompiles_on_arg: int = 0
    hints: tuple[str, ...] = ()
    doc: str = ""


#: Guard kinds whose check holds an object's id or a dict's version: numbers of the process's own.
ID_KINDS = frozenset(
    {"ID_MATCH", "TYPE_MATCH", "CLOSURE_MATCH", "FUNCTION_MATCH", "NN_MODULE", "DICT_VERSION", "FAKE_SCRIPT_TYPE_MATCH"}
)


@dataclass(frozen=True)
class GuardDetail(Wire):
    """One guard with the snippet line that made it; `internal` for torch's own state."""

    kind: str = ""
    check: str = ""
    arg: str = ""
    line: int | None = None
    code: str = ""
    note: str = ""
    internal: bool = False
    #: How soon the guard can fail on the user's next change, lowest first: 0 a variable's
    #: shape, dtype or value, 1 a module attribute's value, 2 the model's structure.
    rank: int = 2
    #: The guard as a person reads it (`x: float32 size=[2, 3]`, `net: type BertModel`);
    #: absent when that is `check` itself (`shown` reads either).
    short: str = wire("", omit=absent_if_empty("short"))
    #: A module attribute's value guard without the module's path (`.p == 0.1`), so that the
    #: same setting on many modules folds into one item; absent when there is none.
    leaf: str = wire("", omit=absent_if_empty("leaf"))

    @property
    def shown(self) -> str:
        """The guard as a person reads it."""
        return self.short or self.check

    @property
    def compared(self) -> tuple[str, str, str]:
        """The guard as two processes compare it (ranks, the findings lane against its run):
        (kind, argument, what a person reads). An identity guard is compared by what it is about,
        not by the id it holds: each process has its own."""
        if self.kind in ID_KINDS:
            return (self.kind, self.arg, self.arg or self.kind)
        return (self.kind, self.arg, self.shown)


@dataclass(frozen=True)
class EntryGuards(Wire):
    compile_id: str = ""
    function: str = ""
    guards: tuple[GuardDetail, ...] = ()


@dataclass(frozen=True)
class SymbolGuard(Wire):
    expr: str = ""
    line: int | None = None


@dataclass(frozen=True)
class ShapeSymbol(Wire):
    """A symbol torch created for a size under dynamic shapes (s0, s77...)."""

    compile_id: str = ""
    symbol: str = ""
    source: str = ""
    arg: str = ""
    dim: int | None = None
    value: str = ""
    range: str = ""
    line: int | None = None
    guards: tuple[SymbolGuard, ...] = ()


@dataclass(frozen=True)
class Specialization(Wire):
    """A size torch fixed to a number, with torch's own reason."""

    compile_id: str = ""
    symbol: str = ""
    source: str = ""
    value: str = ""
    reason: str = ""
    line: int | None = None


def _not_read(call: CallEntry) -> bool:
    return call.status is None


@dataclass(frozen=True)
class CallEntry(Wire):
    """Which compiled entry served one call of inputs(): status "compiled" (made during the
    call), "cached", "eager" (no entry passed, none compiled), "unknown", or None when the call
    raised before torch's cache could be read (entry, status and compiled are then absent)."""

    call: int = 0
    args: tuple[tuple[str, str], ...] = wire((), pairs=True)
    compiled: tuple[str, ...] = wire((), omit=_not_read)
    entry: str | None = wire(None, omit=_not_read)
    status: str | None = wire(None, omit=_not_read)
    why: str = wire("", omit=absent_if_empty("why"))
    summary: str = ""


@dataclass(frozen=True)
class DynamoFrames(Wire):
    """The Python frames Dynamo was handed over the calls (each cache miss of a compiled
    function or of a resume function after a break) and how many it converted into its code."""

    total: int = 0
    converted: int = 0


@dataclass(frozen=True)
class Explanation(Wire):
    """Why it recompiled, where each guard came from, the shape symbols, which entry ran each
    call, the frames Dynamo was handed; on the wire, seven top-level keys of the report."""

    recompiles: tuple[RecompileDetail, ...] = wire((), key="recompile_details")
    limits: tuple[LimitDetail, ...] = wire((), key="recompile_limit_details")
    guards: tuple[EntryGuards, ...] = wire((), key="guard_details")
    symbols: tuple[ShapeSymbol, ...] = wire((), key="shape_symbols")
    specializations: tuple[Specialization, ...] = ()
    calls: tuple[CallEntry, ...] = wire((), key="call_entries")
    #: Absent when the worker could not read them (an older report, torch's counters renamed).
    frames: DynamoFrames | None = wire(None, key="dynamo_frames", omit=absent_if_none("frames"))
