"""The report of one run as frozen values, built from the contract's JSON object.

The JSON dict is the wire format (../shared/contract.md); these dataclasses are how the CLI's
text view and the Textual panes read it. Torch-free. Keys beyond the contract are extensions:
a consumer of the contract may ignore them.
"""

from __future__ import annotations

import functools
import os
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import MISSING, Field, dataclass, field, fields
from types import MappingProxyType
from typing import Any

from playground.engine.settings import Settings

# --- the wire codec: one to_dict/from_dict for every class below ------------------------------
#
# Each report class is a frozen dataclass whose fields are declared in the order the JSON object
# lists its keys, so `to_dict` reproduces torch-free, byte for byte, what the worker has always
# written (tests/engine/test_report_wire.py pins it on every fixture). Field metadata, set with
# `wire(...)`, covers the few places where the JSON is not the field list: another key name
# (`pass`), a key that is absent rather than empty, a nested group flattened into the top level,
# a mapping kept as pairs, and old spellings still read from canned reports.

_WIRE = "wire"


def wire(
    default: Any = None,
    *,
    key: str = "",
    omit: Callable[[Any], bool] | None = None,
    flatten: bool = False,
    pairs: bool = False,
    aliases: tuple[str, ...] = (),
    factory: Callable[[], Any] | None = None,
) -> Any:
    """A dataclass field with wire metadata. `omit(obj)` leaves the key out for that object."""
    meta = {_WIRE: {"key": key, "omit": omit, "flatten": flatten, "pairs": pairs, "aliases": aliases}}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


def _meta(f: Field[Any]) -> dict[str, Any]:
    return f.metadata.get(_WIRE) or {"key": "", "omit": None, "flatten": False, "pairs": False, "aliases": ()}


@functools.cache
def _plan(cls: type) -> tuple[tuple[Field[Any], dict[str, Any], Any], ...]:
    hints = typing.get_type_hints(cls)
    return tuple((f, _meta(f), hints[f.name]) for f in fields(cls) if f.init)


def _freeze(value: Any) -> Any:
    """JSON containers as immutable values: lists become tuples, objects read-only mappings."""
    if isinstance(value, dict):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def _thaw(value: Any) -> Any:
    if isinstance(value, Wire):
        return value.to_dict()
    if isinstance(value, Settings):
        return value.to_dict()
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    return value


#: Set to "1", every `from_dict` in this process and the processes it starts refuses a value of
#: the wrong type instead of reading it as the field's default (the test suite sets it, so that
#: a builder's mistake fails a test rather than vanish into a default). Unset, reading stays
#: lenient: a canned report from an older version, or a line nobody should have written, still
#: loads.
STRICT_ENV = "COMPILE_PLAYGROUND_STRICT_REPORTS"


class WireTypeError(TypeError):
    """A report's key holds a value of another type than its field's (strict reading only)."""


def strict_by_default() -> bool:
    """Whether `from_dict` is strict when not told (STRICT_ENV)."""
    return os.environ.get(STRICT_ENV) == "1"


def _fits(hint: Any, value: Any) -> bool:
    """Whether a (non-null) JSON value has the field's type: what strict reading requires."""
    origin = typing.get_origin(hint)
    if isinstance(hint, type) and (issubclass(hint, Wire) or hint is Settings):
        return isinstance(value, Mapping)
    if origin is tuple:
        return isinstance(value, (list, tuple))
    if hint is bool:
        return isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if origin is not None and isinstance(origin, type) and issubclass(origin, Mapping):
        return isinstance(value, Mapping)
    return True  # Any


def _read(hint: Any, value: Any, default: Any, strict: bool = False, where: str = "") -> Any:
    """One JSON value as the field's type; a missing or null value gives the default. `strict`:
    a value of another type is a WireTypeError rather than the default or a conversion."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (types.UnionType, typing.Union):
        if value is None:
            return None
        return _read(next(a for a in args if a is not type(None)), value, default, strict, where)
    if value is None:
        return default
    if isinstance(hint, type) and issubclass(hint, Wire) and isinstance(value, hint):
        return value  # built typed where the fact was first known: nothing to read
    if strict and not _fits(hint, value):
        raise WireTypeError(f"{where}: {type(value).__name__} {value!r:.80} is not {getattr(hint, '__name__', hint)}")
    if isinstance(hint, type) and issubclass(hint, Wire):
        return hint.from_dict(value, strict=strict)
    if hint is Settings:
        return Settings.from_dict(value)
    if origin is tuple and args and args[-1] is Ellipsis:
        items = value if isinstance(value, (list, tuple)) else ()
        return tuple(_read(args[0], v, None, strict, f"{where}[{i}]") for i, v in enumerate(items))
    if hint is float:
        # A phase time torch did not report reads as zero, never as a string in a sum.
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default
    if hint is bool:
        return bool(value)
    if hint is str:
        return value if isinstance(value, str) else str(value)
    return _freeze(value)


class Wire:
    """The codec shared by every report class: `to_dict` for the wire and the JSON output,
    `from_dict` for what comes back (a canned report may lack keys: they take the defaults)."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f, meta, _ in _plan(type(self)):
            value = getattr(self, f.name)
            if meta["omit"] is not None and meta["omit"](self):
                continue
            if meta["flatten"]:
                out.update(value.to_dict())
            elif meta["pairs"]:
                out[meta["key"] or f.name] = {k: v for k, v in value}
            else:
                out[meta["key"] or f.name] = _thaw(value)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, *, strict: bool | None = None) -> Any:
        """The value a JSON object holds; a missing key takes its field's default. Lenient
        unless `strict` (by default: STRICT_ENV), where a value of the wrong type raises
        WireTypeError."""
        if strict is None:
            strict = strict_by_default()
        data = data or {}
        values: dict[str, Any] = {}
        for f, meta, hint in _plan(cls):
            if meta["flatten"]:
                values[f.name] = hint.from_dict(data, strict=strict)
                continue
            raw = data.get(meta["key"] or f.name)
            for alias in meta["aliases"]:
                if raw is None or raw == "":
                    raw = data.get(alias)
            default = f.default if f.default is not MISSING else f.default_factory()  # type: ignore[misc]
            where = f"{cls.__name__}.{meta['key'] or f.name}"
            if meta["pairs"]:
                if strict and raw is not None and not isinstance(raw, Mapping):
                    raise WireTypeError(f"{where}: {type(raw).__name__} is not an object")
                pairs = raw.items() if isinstance(raw, Mapping) else ()
                values[f.name] = tuple((str(k), str(v)) for k, v in pairs) if pairs else default
            else:
                values[f.name] = _read(hint, raw, default, strict, where)
        return cls(**values)

    @classmethod
    def wire_keys(cls) -> frozenset[str]:
        """Every key this class reads (the test for unknown keys uses it)."""
        keys: set[str] = set()
        for f, meta, hint in _plan(cls):
            if meta["flatten"]:
                keys |= hint.wire_keys()
            else:
                keys.add(meta["key"] or f.name)
                keys.update(meta["aliases"])
        return frozenset(keys)


def _absent_if_none(name: str) -> Callable[[Any], bool]:
    return lambda obj: getattr(obj, name) is None


def _absent_if_empty(name: str) -> Callable[[Any], bool]:
    return lambda obj: not getattr(obj, name)


@dataclass(frozen=True)
class GraphBreak(Wire):
    """One distinct break site, as torch's graph_breaks log reported it."""

    reason: str = ""
    hint: str = ""
    hints: tuple[str, ...] = ()
    explanation: str = ""
    gb_id: str | None = None
    gb_type: str | None = None
    file: str = ""
    line: int | None = None
    #: "Graph break in user code" (the text of the first log record for this site).
    detail: str = ""
    count: int = 1


@dataclass(frozen=True)
class Recompile(Wire):
    function: str = ""
    reasons: tuple[str, ...] = ()
    compile_id: str | None = None
    line: int | None = None


@dataclass(frozen=True)
class GuardSet(Wire):
    """The guards of one compiled cache entry (one frame compile id such as 0/1)."""

    compile_id: str = ""
    function: str = ""
    line: int | None = None
    guards: tuple[str, ...] = ()


@dataclass(frozen=True)
class Graph(Wire):
    """One FX graph handed to the backend, and, with Inductor, the code it generated."""

    index: int = 0
    compile_id: str | None = None
    code: str = ""
    op_count: int = 0
    output_code: str | None = None


@dataclass(frozen=True)
class RunError(Wire):
    kind: str = "worker"  # "compile" | "snippet" | "worker" | "settings"
    type: str = ""
    message: str = ""
    line: int | None = None
    detail: str = ""

    def one_line(self) -> str:
        where = f" (line {self.line})" if self.line else ""
        return f"{self.kind} error{where}: {self.type}: {self.message}".strip()


@dataclass(frozen=True)
class Comparison(Wire):
    """One output leaf or one gradient, eager against compiled."""

    name: str = wire("", aliases=("path",))
    call: int = 1
    dtype: str = ""
    max_abs: float | None = None
    max_rel: float | None = None
    atol: float | None = None
    rtol: float | None = None
    ok: bool = False
    #: False for a leaf that could not be compared (a generator, an object whose == raised).
    compared: bool = True
    note: str = ""
    #: In words (VERDICTS): "identical", "within tolerance", "within rounding", "differs", or ""
    #: for a leaf not compared.
    verdict: str = wire("", omit=_absent_if_empty("verdict"))
    #: RMS error against the float64 reference of eager and of compiled, when it was consulted.
    eager_err: float | None = wire(None, omit=_absent_if_none("eager_err"))
    compiled_err: float | None = wire(None, omit=_absent_if_none("compiled_err"))
    #: Where the largest difference is, and the values there, for a leaf that differs.
    worst: str = wire("", omit=_absent_if_empty("worst"))


#: The verdicts from best to worst; an Equivalence's verdict is its worst leaf's.
VERDICTS = ("identical", "within tolerance", "within rounding", "differs")


@dataclass(frozen=True)
class Equivalence(Wire):
    ok: bool = False
    outputs: tuple[Comparison, ...] = ()
    grads: tuple[Comparison, ...] = ()
    note: str = ""
    #: The worst leaf's verdict ("" in a report from before verdicts, or when nothing compared).
    verdict: str = wire("", omit=_absent_if_empty("verdict"))
    #: Buffers, parameters and module-level tensors that a call changed, eager against compiled,
    #: after that call.
    state: tuple[Comparison, ...] = wire((), omit=_absent_if_empty("state"))
    #: How the reference was made: the eager run's process, and the float64 run when consulted.
    reference: str = wire("", omit=_absent_if_empty("reference"))
    #: The rule a value outside the tolerance was judged by against float64, in words.
    rule: str = wire("", omit=_absent_if_empty("rule"))


@dataclass(frozen=True)
class Timings(Wire):
    note: str = ""
    compile_s: float | None = None
    device: str = "cpu"
    #: "hit", "miss", "partial", "disabled" or "n/a" (backends without Inductor's caches).
    compile_cache: str = "n/a"
    #: Inductor's FX graph and AOT autograd cache hits and misses during the first call.
    cache_counts: Mapping[str, int] = wire(factory=lambda: MappingProxyType({}))
    timed_call: int | None = None
    eager_ms: float | None = None
    compiled_ms: float | None = None
    eager_iqr_ms: float | None = None
    compiled_iqr_ms: float | None = None
    eager_runs: int = 0
    compiled_runs: int = 0
    speedup: float | None = None
    #: Why the speedup is not to be believed ("" when it is): too few runs, a wide spread, a
    #: busy machine, or an impossible result (the eager backend far from 1x).
    unreliable: str = wire("", omit=_absent_if_empty("unreliable"))
    #: The speedup's spread: the quartiles of the ratio over the interleaved blocks.
    speedup_low: float | None = wire(None, omit=_absent_if_none("speedup_low"))
    speedup_high: float | None = wire(None, omit=_absent_if_none("speedup_high"))
    blocks: int = wire(0, omit=_absent_if_empty("blocks"))
    machine: Machine | None = wire(None, omit=_absent_if_none("machine"))
    #: Graphs compiled during the timing loop (not in graph_count): the steady state was never reached.
    graphs_during_timing: int = wire(0, omit=_absent_if_empty("graphs_during_timing"))
    #: The threads torch's CPU ops used while timing (torch.get_num_threads()): a speedup on 2
    #: threads says little about 32.
    threads: int | None = wire(None, omit=_absent_if_none("threads"))


@dataclass(frozen=True)
class Machine(Wire):
    """The machine while the timings ran: how much of our CPUs others took."""

    cpus: int = 0
    #: The 1-minute load average at the end, and the runnable threads then.
    load1: float | None = None
    runnable: int | None = None
    #: CPUs' worth of time that other processes (and the hypervisor) used on our CPUs meanwhile.
    others_cpu: float | None = None


@dataclass(frozen=True)
class Output(Wire):
    """What the snippet printed during the run (stdout and stderr together, truncated)."""

    text: str = ""
    bytes: int = 0
    truncated: bool = False
    #: What the timed repetitions printed on top (not kept; present only when they printed).
    timing_bytes: int | None = wire(None, omit=_absent_if_none("timing_bytes"))


@dataclass(frozen=True)
class Logs(Wire):
    graph_breaks: str = ""
    recompiles: str = ""
    guards: str = ""


@dataclass(frozen=True)
class WorkerInfo(Wire):
    """The process that ran the snippet: its pid, its memory, and how runs were isolated."""

    pid: int | None = None
    rss_mb: float | None = None
    isolation: str = wire("", omit=_absent_if_empty("isolation"))
    #: The run's largest resident memory (its process, from the kernel's high-water mark).
    peak_rss_mb: float | None = wire(None, omit=_absent_if_none("peak_rss_mb"))


@dataclass(frozen=True)
class Report(Wire):
    """One run's result. `stage` is "traced" (Dynamo has traced a graph, the calls are still
    compiling: what it decided so far), "diagnostics" (the calls have run; equivalence and
    timings still None) or "complete". The fields are in the JSON object's key order; the extensions follow the
    contract's keys."""

    torch_version: str = ""
    settings: Settings = field(default_factory=Settings)
    graph_count: int = 0
    graph_breaks: tuple[GraphBreak, ...] = ()
    graph_break_count: int = 0
    recompiles: tuple[Recompile, ...] = ()
    recompile_count: int = 0
    recompile_limit_hit: bool = False
    guards: tuple[GuardSet, ...] = ()
    error: RunError | None = None
    equivalence: Equivalence | None = None
    timings: Timings | None = None
    logs: Logs = field(default_factory=Logs)
    stage: str = "complete"
    snippet: str = ""
    calls: int = 0
    graphs: tuple[Graph, ...] = ()
    recompile_limit_functions: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    #: Why it recompiled, guard lines, shape symbols, entry per call (extension keys,
    #: flattened into the top level of the JSON object).
    explanation: Explanation = wire(factory=lambda: Explanation(), flatten=True)
    #: Compile time per phase for each frame compile, and the sums.
    compile_phases: tuple[CompilePhase, ...] = ()
    compile_phase_totals: PhaseTotals | None = None
    #: The code Dynamo wrote (None: not asked for in this run), and how it went.
    dynamo_code: tuple[DynamoCode, ...] | None = None
    dynamo_code_note: str = ""
    #: Seconds the worker spent in each of its phases (load, calls, equivalence, timing).
    phase_s: Mapping[str, float] | None = wire(None, omit=_absent_if_none("phase_s"))
    #: The snippet's own modules it imported from its folder (a change to one reruns it).
    local_modules: tuple[str, ...] = ()
    duration_s: float | None = None
    output: Output = field(default_factory=Output)
    worker: WorkerInfo | None = None
    content_sha256: str = ""
    wall_s: float | None = None
    worker_restarted: bool = False
    worker_restart_reason: str = wire("", omit=_absent_if_empty("worker_restart_reason"))
    #: What each compile did: nodes, kernels, caches, config (issue 21; extension keys, absent
    #: when empty so that a report without them prints as it always did).
    compile_anatomy: tuple[GraphAnatomy, ...] = wire((), omit=_absent_if_empty("compile_anatomy"))
    #: The breaks grouped by site and torch's break type, with its hint category.
    break_sites: tuple[BreakSite, ...] = wire((), omit=_absent_if_empty("break_sites"))
    #: What the guards cost the timed call (None: not measured in this run).
    guard_cost: GuardCost | None = wire(None, omit=_absent_if_none("guard_cost"))
    #: Inductor's kernels of the timed call, profiled after the timing (None: not asked for).
    kernels_profile: KernelsProfile | None = wire(None, omit=_absent_if_none("kernels_profile"))
    #: What a guard filter or skip_guard_eval_unsafe would save the timed call, measured after
    #: the timing on request (None: not asked for).
    guard_what_if: GuardWhatIf | None = wire(None, omit=_absent_if_none("guard_what_if"))

    @property
    def equivalence_word(self) -> str:
        """ "ok", "rounding" (equal within float rounding, judged against float64), "FAIL" or
        "n/a" (no equivalence yet, or the run failed)."""
        if self.equivalence is None:
            return "n/a"
        if not self.equivalence.ok:
            return "FAIL"
        return "rounding" if self.equivalence.verdict == "within rounding" else "ok"

    def summary_line(self) -> str:
        """`graphs N  breaks N  recompiles N  equiv ok|FAIL  speedup X.XXx`: the speedup never
        travels without the graph and break counts beside it, and is "unreliable" instead of a
        number when its measurement says so."""
        speedup = "n/a"
        if self.timings is not None and self.timings.speedup is not None:
            speedup = "unreliable" if self.timings.unreliable else f"{self.timings.speedup:.2f}x"
        return (
            f"graphs {self.graph_count}  breaks {self.graph_break_count}  "
            f"recompiles {self.recompile_count}  equiv {self.equivalence_word}  "
            f"speedup {speedup}"
        )


# --- why it recompiled (extension fields; explain.py builds them) ----------------------------


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
    why: str = wire("", omit=_absent_if_empty("why"))
    summary: str = ""


@dataclass(frozen=True)
class Explanation(Wire):
    """Why it recompiled, where each guard came from, the shape symbols, which entry ran each
    call; on the wire, six top-level keys of the report."""

    recompiles: tuple[RecompileDetail, ...] = wire((), key="recompile_details")
    limits: tuple[LimitDetail, ...] = wire((), key="recompile_limit_details")
    guards: tuple[EntryGuards, ...] = wire((), key="guard_details")
    symbols: tuple[ShapeSymbol, ...] = wire((), key="shape_symbols")
    specializations: tuple[Specialization, ...] = ()
    calls: tuple[CallEntry, ...] = wire((), key="call_entries")


# --- how it compiled (extension fields; the worker's capture/ builds them) ---------------------


@dataclass(frozen=True)
class CompilePhase(Wire):
    """One frame compile's time by phase, from torch's compilation_metrics: disjoint parts that
    sum to `total_s`. `aot_s` is the backend's compile outside Inductor (AOT autograd, or the
    whole backend for eager); `compile_s` the C++/Triton compilation."""

    compile_id: str = ""
    function: str = ""
    line: int | None = None
    call: int | None = None
    pass_: str = wire("forward", key="pass")
    dynamo_s: float = 0.0
    aot_s: float = 0.0
    inductor_s: float = 0.0
    codegen_s: float = 0.0
    compile_s: float = 0.0
    other_s: float = 0.0
    total_s: float = 0.0
    #: The first run of the graphs this compile made: outside torch's metrics and
    #: `total_s`, inside the cold first call. None (key absent) in reports that predate it.
    first_run_s: float | None = wire(None, omit=_absent_if_none("first_run_s"))


#: The phases in the order a compile runs them: the fields of `CompilePhase` and `PhaseTotals`
#: that sum to `total_s` (the views' words for them: playground/engine/wording/phases.py).
PHASE_KEYS: tuple[str, ...] = ("dynamo_s", "aot_s", "inductor_s", "codegen_s", "compile_s", "other_s")


@dataclass(frozen=True)
class PhaseTotals(Wire):
    """The phases summed over the run; `first_call_s` sums the compiles of call 1 (what the
    cold compile time holds besides running the code)."""

    dynamo_s: float = 0.0
    aot_s: float = 0.0
    inductor_s: float = 0.0
    codegen_s: float = 0.0
    compile_s: float = 0.0
    other_s: float = 0.0
    total_s: float = 0.0
    first_call_s: float = 0.0
    frames: int = 0
    #: The graphs' first runs over the run, and over call 1 (`first_call_s + first_call_run_s`
    #: is what the cold first call measured, less guards and the snippet's own code).
    first_run_s: float | None = wire(None, omit=_absent_if_none("first_run_s"))
    first_call_run_s: float | None = wire(None, omit=_absent_if_none("first_call_run_s"))


@dataclass(frozen=True)
class DynamoCode(Wire):
    """One piece of code Dynamo wrote, decompiled by depyf: `kind` "transformed" (the frame's
    new bytecode), "resume" (the function that continues after a graph break; torch names it
    after the break's line, `resumes_at_line`) or "guard" (the check before a cache entry runs)."""

    name: str = ""
    kind: str = ""
    function: str = ""
    resumes_at_line: int | None = None
    entry: int | None = None
    source: str = ""


# --- where the time goes (issue 21; extension fields, the worker's capture/ builds them) --------


@dataclass(frozen=True)
class ConfigSetting(Wire):
    """One torch config value that differs from torch's default when a graph was compiled:
    `module` "dynamo", "inductor" or "functorch"; values as Python writes them (repr)."""

    module: str = ""
    name: str = ""
    value: str = ""
    default: str = ""


@dataclass(frozen=True)
class CompiledModule(Wire):
    """One module Inductor wrote for a graph (the forward, and the backward when there is one):
    its post-grad ATen nodes, its kernels (C++ or Triton, in the order the module defines them),
    the library kernels it calls (`mm`, `addmm`... and ATen fallbacks), and what the FX-graph
    cache did ("hit", "miss", "bypass"; "" when it logged nothing: cache off)."""

    pass_: str = wire("forward", key="pass")
    post_grad_nodes: int | None = None
    kernels: tuple[str, ...] = ()
    extern_kernels: tuple[str, ...] = ()
    fx_graph_cache: str = ""
    fx_graph_key: str = ""


@dataclass(frozen=True)
class GraphAnatomy(Wire):
    """One graph's compile: `fx_nodes` counts every node of the graph Dynamo handed the backend
    (placeholders and output included), `ops` its operations; `ir_nodes` Inductor's IR nodes for
    the frame; `aot_autograd_cache` "hit", "miss", "bypass" or ""; `config` what differed from
    torch's defaults for the run's compiles (read once, as torch.compile is called: the run's
    settings, the snippet's module-level changes and the backend's mode and options in place)."""

    graph: int = 0
    compile_id: str = ""
    fx_nodes: int = 0
    ops: int = 0
    ir_nodes: int | None = None
    aot_autograd_cache: str = ""
    modules: tuple[CompiledModule, ...] = ()
    config: tuple[ConfigSetting, ...] = ()


@dataclass(frozen=True)
class BreakSite(Wire):
    """One distinct graph break: the records torch logged at one snippet site for one break type
    (`gb_id`, or `gb_type` where the registry has none), `count` of them. `categories` are torch's
    own (graph_break_hints: "FUNDAMENTAL", "USER_ERROR", "SUPPORTABLE", "DYNAMO_BUG"...; empty when
    the break carries only hints specific to it); `explanation` and `hints` are what torch said at
    run time, `registry_explanation` the registry's text for the id; `caused` the breaks this one
    set off while torch handled it (e.g. "graph break in loop": the frame was then skipped)."""

    file: str = ""
    line: int | None = None
    gb_id: str | None = None
    gb_type: str = ""
    count: int = 1
    categories: tuple[str, ...] = ()
    explanation: str = ""
    registry_explanation: str = ""
    hints: tuple[str, ...] = ()
    caused: tuple[str, ...] = ()
    doc: str = ""


@dataclass(frozen=True)
class EntryGuardCount(Wire):
    """One compiled entry of the target's frame and the leaf guards a full check evaluates."""

    compile_id: str = ""
    guards: int | None = None


@dataclass(frozen=True)
class GuardCost(Wire):
    """What guard evaluation costs a call of the target, measured on the timed call's arguments
    after the timing: the entries checked in torch's order (most recent first) until one
    passes, `guards_evaluated` at most the leaves of those entries (a failing entry stops at its
    first failing guard), `check_us` the median time of that sequence of checks per call (the
    C++ frame evaluation around it not included), and its `share` of the compiled call
    (`compiled_us`, the timing's median). `lookup_us`: the profiler's "TorchDynamo Cache Lookup"
    per call, when the kernels profile ran. Only the target's own frame: a frame resumed after a
    break has guards of its own."""

    timed_call: int | None = None
    entries: tuple[EntryGuardCount, ...] = ()
    entry: str | None = None
    entries_tried: int = 0
    guards_evaluated: int | None = None
    check_us: float | None = None
    compiled_us: float | None = None
    share: float | None = None
    lookup_us: float | None = None
    note: str = ""


@dataclass(frozen=True)
class KernelTime(Wire):
    """One kernel of the timed call: `kind` "cpp", "triton" or "extern" (a library kernel such as
    mm, or an ATen fallback); `us` its median time per call (inclusive) and `share` of the
    compiled call; the ATen ops and Dynamo-graph (FX) nodes it holds, and the snippet lines those
    came from (Inductor's provenance)."""

    graph: int = 0
    compile_id: str = ""
    name: str = ""
    kind: str = ""
    us: float | None = None
    share: float | None = None
    aten_ops: tuple[str, ...] = ()
    fx_nodes: tuple[str, ...] = ()
    lines: tuple[int, ...] = ()


@dataclass(frozen=True)
class OpTime(Wire):
    """One ATen op of the eager call: its self time per call (mean over the profiled calls)."""

    name: str = ""
    us: float = 0.0
    share: float | None = None


@dataclass(frozen=True)
class KernelsProfile(Wire):
    """The timed call under torch's profiler, in a pass of its own after the timing (so the
    timings carry no profiler overhead): medians per call of the whole compiled call
    (`compiled_us`, profiler overhead included), of the compiled regions, of Dynamo's cache lookup
    and guards (`lookup_us`), of the kernels (`kernels_us`, their sum); each kernel; eager's top
    ops beside it, so a reader sees what fused."""

    timed_call: int | None = None
    calls: int = 0
    compiled_us: float | None = None
    region_us: float | None = None
    lookup_us: float | None = None
    kernels_us: float | None = None
    kernels: tuple[KernelTime, ...] = ()
    eager_us: float | None = None
    eager_ops: tuple[OpTime, ...] = ()
    note: str = ""


@dataclass(frozen=True)
class FilterPreview(Wire):
    """What one of torch.compiler's guard filters would drop of the guards handed to the filter in
    the what-if's recompile (the Python-side guards, before they become leaves)."""

    filter: str = ""
    drops: int = 0


@dataclass(frozen=True)
class GuardWhatIf(Wire):
    """The timed call's guards under torch's unsafe switches, measured on request after the
    timing (the run's own figures never include it). `filter`: the torch.compiler guard filter
    applied in a recompile of the same target (`reset()`, the same calls of inputs() with their
    recorded arguments, forward only): of the `filter_guards` guards handed to it, `dropped`, the
    sources they read named as the snippet does (`dropped_sources`, the first few). Before is
    the run's own cache entries, after the recompile's: `entries_*` in the target's frame,
    `guards_*` the leaf guards of the entry that serves the timed call, `check_us_*` the timed
    call's guard checks (guard_cost's way), `lookup_us_*` the profiler's "TorchDynamo Cache
    Lookup", `call_us_*` the compiled call: medians per call, each `*_noise_us` the larger
    interquartile range of its two. `outputs_agree`: whether the timed call's outputs under the
    filter equal those without it, exactly (`output_max_abs` the largest difference).
    `stance_*`: the run's own entries under set_stance(skip_guard_eval_unsafe=True), no
    recompile (with one entry no guard is checked); `stance_probe_stale`: on this torch, a
    function compiled for flag=True and called with flag=False under that stance returned
    flag=True's result; `stance_error`: what torch raised when the timed call ran under it.
    `preview`: what each filter torch ships would drop of the same guards. `note`: why a part
    was not measured."""

    timed_call: int | None = None
    target: str = ""
    filter: str = ""
    filter_guards: int = 0
    dropped: int = 0
    dropped_sources: tuple[str, ...] = ()
    entries_before: int = 0
    entries_after: int | None = None
    guards_before: int | None = None
    guards_after: int | None = None
    check_us_before: float | None = None
    check_us_after: float | None = None
    check_noise_us: float | None = None
    lookup_us_before: float | None = None
    lookup_us_after: float | None = None
    lookup_noise_us: float | None = None
    call_us_before: float | None = None
    call_us_after: float | None = None
    call_noise_us: float | None = None
    outputs_agree: bool | None = None
    output_max_abs: float | None = None
    stance_lookup_us: float | None = None
    stance_call_us: float | None = None
    stance_probe_stale: bool | None = None
    stance_error: str = ""
    preview: tuple[FilterPreview, ...] = ()
    note: str = ""
