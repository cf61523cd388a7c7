"""The report of one run as frozen values, built from the contract's JSON object.

The JSON dict is the wire format (../shared/contract.md); these dataclasses are how the CLI's
text view and the Textual panes read it. Torch-free. Keys beyond the contract are extensions:
a consumer of the contract may ignore them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from playground.engine.settings import Settings


def blank_report(
    path: str, settings: dict[str, Any], error: dict[str, Any] | None = None, torch_version: str = ""
) -> dict[str, Any]:
    """A contract-shaped report with nothing found yet: the start of every run's report, and
    the whole report of a run that never reached torch."""
    return {
        "torch_version": torch_version,
        "settings": settings,
        "graph_count": 0,
        "graph_breaks": [],
        "graph_break_count": 0,
        "recompiles": [],
        "recompile_count": 0,
        "recompile_limit_hit": False,
        "guards": [],
        "error": error,
        "equivalence": None,
        "timings": None,
        "logs": {"graph_breaks": "", "recompiles": "", "guards": ""},
        "stage": "complete",
        "snippet": str(path),
        "calls": 0,
        "graphs": [],
        "recompile_limit_functions": [],
        "notes": [],
    }


def _tuple(items: Any, build: Any) -> tuple[Any, ...]:
    return tuple(build(item) for item in (items or ()))


@dataclass(frozen=True)
class GraphBreak:
    """One distinct break site, as torch's graph_breaks log reported it."""

    reason: str
    hint: str
    file: str
    line: int | None
    count: int
    gb_id: str | None = None
    gb_type: str | None = None
    explanation: str = ""
    hints: tuple[str, ...] = ()
    #: "Graph break in user code" (the text of the first log record for this site).
    detail: str = ""

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GraphBreak:
        return cls(
            reason=d.get("reason", ""),
            hint=d.get("hint", "") or "",
            file=d.get("file", "") or "",
            line=d.get("line"),
            count=int(d.get("count", 1)),
            gb_id=d.get("gb_id"),
            gb_type=d.get("gb_type"),
            explanation=d.get("explanation", "") or "",
            hints=tuple(d.get("hints") or ()),
            detail=d.get("detail", "") or "",
        )


@dataclass(frozen=True)
class Recompile:
    function: str
    reasons: tuple[str, ...]
    compile_id: str | None = None
    line: int | None = None

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Recompile:
        return cls(
            function=d.get("function", ""),
            reasons=tuple(d.get("reasons") or ()),
            compile_id=d.get("compile_id"),
            line=d.get("line"),
        )


@dataclass(frozen=True)
class GuardSet:
    """The guards of one compiled cache entry (one frame compile id such as 0/1)."""

    compile_id: str
    guards: tuple[str, ...]
    function: str = ""
    line: int | None = None

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GuardSet:
        return cls(
            compile_id=str(d.get("compile_id", "")),
            guards=tuple(d.get("guards") or ()),
            function=d.get("function", "") or "",
            line=d.get("line"),
        )


@dataclass(frozen=True)
class Graph:
    """One FX graph handed to the backend, and, with Inductor, the code it generated."""

    index: int
    compile_id: str | None
    code: str
    op_count: int = 0
    output_code: str | None = None

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Graph:
        return cls(
            index=int(d.get("index", 0)),
            compile_id=d.get("compile_id"),
            code=d.get("code", ""),
            op_count=int(d.get("op_count", 0)),
            output_code=d.get("output_code"),
        )


@dataclass(frozen=True)
class RunError:
    kind: str  # "compile" | "snippet" | "worker" | "settings"
    type: str
    message: str
    line: int | None = None
    detail: str = ""

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> RunError | None:
        if not d:
            return None
        return cls(
            kind=d.get("kind", "worker"),
            type=d.get("type", ""),
            message=d.get("message", ""),
            line=d.get("line"),
            detail=d.get("detail", "") or "",
        )

    def one_line(self) -> str:
        where = f" (line {self.line})" if self.line else ""
        return f"{self.kind} error{where}: {self.type}: {self.message}".strip()


@dataclass(frozen=True)
class Comparison:
    """One output leaf or one gradient, eager against compiled."""

    name: str
    max_abs: float | None
    max_rel: float | None
    ok: bool
    call: int = 1
    atol: float | None = None
    rtol: float | None = None
    dtype: str = ""
    note: str = ""

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Comparison:
        return cls(
            name=d.get("name") or d.get("path") or "",
            max_abs=d.get("max_abs"),
            max_rel=d.get("max_rel"),
            ok=bool(d.get("ok")),
            call=int(d.get("call", 1)),
            atol=d.get("atol"),
            rtol=d.get("rtol"),
            dtype=d.get("dtype", "") or "",
            note=d.get("note", "") or "",
        )


@dataclass(frozen=True)
class Equivalence:
    ok: bool
    outputs: tuple[Comparison, ...]
    grads: tuple[Comparison, ...]
    note: str = ""

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> Equivalence | None:
        if not d:
            return None
        return cls(
            ok=bool(d.get("ok")),
            outputs=_tuple(d.get("outputs"), Comparison.from_dict),
            grads=_tuple(d.get("grads"), Comparison.from_dict),
            note=d.get("note", "") or "",
        )


@dataclass(frozen=True)
class Timings:
    compile_s: float | None
    eager_ms: float | None
    compiled_ms: float | None
    speedup: float | None
    device: str
    eager_iqr_ms: float | None = None
    compiled_iqr_ms: float | None = None
    eager_runs: int = 0
    compiled_runs: int = 0
    #: "hit", "miss", "partial", "disabled" or "n/a" (backends without Inductor's caches).
    compile_cache: str = "n/a"
    timed_call: int | None = None
    note: str = ""

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> Timings | None:
        if not d:
            return None
        return cls(
            compile_s=d.get("compile_s"),
            eager_ms=d.get("eager_ms"),
            compiled_ms=d.get("compiled_ms"),
            speedup=d.get("speedup"),
            device=d.get("device", "cpu"),
            eager_iqr_ms=d.get("eager_iqr_ms"),
            compiled_iqr_ms=d.get("compiled_iqr_ms"),
            eager_runs=int(d.get("eager_runs", 0) or 0),
            compiled_runs=int(d.get("compiled_runs", 0) or 0),
            compile_cache=d.get("compile_cache", "n/a") or "n/a",
            timed_call=d.get("timed_call"),
            note=d.get("note", "") or "",
        )


@dataclass(frozen=True)
class Output:
    """What the snippet printed during the run (stdout and stderr together, truncated)."""

    text: str = ""
    bytes: int = 0
    truncated: bool = False

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> Output:
        d = d or {}
        return cls(
            text=d.get("text", ""),
            bytes=int(d.get("bytes", 0)),
            truncated=bool(d.get("truncated")),
        )


@dataclass(frozen=True)
class Logs:
    graph_breaks: str = ""
    recompiles: str = ""
    guards: str = ""

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> Logs:
        d = d or {}
        return cls(
            graph_breaks=d.get("graph_breaks", ""),
            recompiles=d.get("recompiles", ""),
            guards=d.get("guards", ""),
        )


@dataclass(frozen=True)
class Report:
    """One run's result. `stage` is "diagnostics" (equivalence and timings still None) or
    "complete"."""

    torch_version: str
    settings: Settings
    graph_count: int
    graph_breaks: tuple[GraphBreak, ...]
    graph_break_count: int
    recompiles: tuple[Recompile, ...]
    recompile_count: int
    recompile_limit_hit: bool
    guards: tuple[GuardSet, ...]
    error: RunError | None
    equivalence: Equivalence | None
    timings: Timings | None
    logs: Logs
    stage: str = "complete"
    content_sha256: str = ""
    snippet: str = ""
    calls: int = 0
    graphs: tuple[Graph, ...] = ()
    recompile_limit_functions: tuple[str, ...] = ()
    output: Output = field(default_factory=Output)
    duration_s: float | None = None
    worker_restarted: bool = False
    worker_restart_reason: str = ""
    notes: tuple[str, ...] = ()
    #: Why it recompiled, guard lines, shape symbols, entry per call (issue 11's extension keys).
    explanation: Explanation = field(default_factory=lambda: Explanation())
    #: Issue 12: compile time per phase for each frame compile, and the sums.
    compile_phases: tuple[CompilePhase, ...] = ()
    compile_phase_totals: PhaseTotals | None = None
    #: Issue 12: the code Dynamo wrote (None: not asked for in this run), and how it went.
    dynamo_code: tuple[DynamoCode, ...] | None = None
    dynamo_code_note: str = ""
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Report:
        return cls(
            torch_version=d.get("torch_version", ""),
            settings=Settings.from_dict(d.get("settings")),
            graph_count=int(d.get("graph_count", 0)),
            graph_breaks=_tuple(d.get("graph_breaks"), GraphBreak.from_dict),
            graph_break_count=int(d.get("graph_break_count", 0)),
            recompiles=_tuple(d.get("recompiles"), Recompile.from_dict),
            recompile_count=int(d.get("recompile_count", 0)),
            recompile_limit_hit=bool(d.get("recompile_limit_hit")),
            guards=_tuple(d.get("guards"), GuardSet.from_dict),
            error=RunError.from_dict(d.get("error")),
            equivalence=Equivalence.from_dict(d.get("equivalence")),
            timings=Timings.from_dict(d.get("timings")),
            logs=Logs.from_dict(d.get("logs")),
            stage=d.get("stage", "complete"),
            content_sha256=d.get("content_sha256", "") or "",
            snippet=d.get("snippet", "") or "",
            calls=int(d.get("calls", 0) or 0),
            graphs=_tuple(d.get("graphs"), Graph.from_dict),
            recompile_limit_functions=tuple(d.get("recompile_limit_functions") or ()),
            output=Output.from_dict(d.get("output")),
            duration_s=d.get("duration_s"),
            worker_restarted=bool(d.get("worker_restarted")),
            worker_restart_reason=d.get("worker_restart_reason", "") or "",
            notes=tuple(d.get("notes") or ()),
            explanation=Explanation.from_dict(d),
            compile_phases=_tuple(d.get("compile_phases"), CompilePhase.from_dict),
            compile_phase_totals=PhaseTotals.from_dict(d.get("compile_phase_totals")),
            dynamo_code=None if d.get("dynamo_code") is None else _tuple(d.get("dynamo_code"), DynamoCode.from_dict),
            dynamo_code_note=d.get("dynamo_code_note", "") or "",
            raw=d,
        )

    @property
    def equivalence_word(self) -> str:
        """ "ok", "FAIL" or "n/a" (no equivalence yet, or the run failed)."""
        if self.equivalence is None:
            return "n/a"
        return "ok" if self.equivalence.ok else "FAIL"

    def summary_line(self) -> str:
        """`graphs N  breaks N  recompiles N  equiv ok|FAIL  speedup X.XXx`: the speedup never
        travels without the graph and break counts beside it."""
        speedup = "n/a"
        if self.timings is not None and self.timings.speedup is not None:
            speedup = f"{self.timings.speedup:.2f}x"
        return (
            f"graphs {self.graph_count}  breaks {self.graph_break_count}  "
            f"recompiles {self.recompile_count}  equiv {self.equivalence_word}  "
            f"speedup {speedup}"
        )


# --- issue 11: why it recompiled (extension fields; explain.py builds them) -------------------


@dataclass(frozen=True)
class ReasonRow:
    """One failing guard of a recompile, per argument: what the entry was built for (`was`),
    what arrived (`now`), and the snippet line the argument came from."""

    arg: str
    guard: str
    was: str = ""
    now: str = ""
    line: int | None = None
    note: str = ""
    #: The cache entries that failed on this argument (newest first).
    entries: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ReasonRow:
        return cls(
            arg=d.get("arg", "") or "",
            guard=d.get("guard", "") or "",
            was=str(d.get("was", "") or ""),
            now=str(d.get("now", "") or ""),
            line=d.get("line"),
            note=d.get("note", "") or "",
            entries=tuple(d.get("entries") or ()),
        )


@dataclass(frozen=True)
class RecompileDetail:
    function: str
    entry: str | None
    call: int | None
    reasons: tuple[ReasonRow, ...]

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RecompileDetail:
        return cls(
            function=d.get("function", "") or "",
            entry=d.get("entry"),
            call=d.get("call"),
            reasons=_tuple(d.get("reasons"), ReasonRow.from_dict),
        )


@dataclass(frozen=True)
class LimitDetail:
    """recompile_limit hit: the function, the limit, the argument whose changes used it up."""

    function: str
    limit: int
    arg: str = ""
    config: str = "recompile_limit"
    recompiles_on_arg: int = 0
    hints: tuple[str, ...] = ()
    doc: str = ""

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LimitDetail:
        return cls(
            function=d.get("function", "") or "",
            limit=int(d.get("limit", 0) or 0),
            arg=d.get("arg", "") or "",
            config=d.get("config", "recompile_limit") or "recompile_limit",
            recompiles_on_arg=int(d.get("recompiles_on_arg", 0) or 0),
            hints=tuple(d.get("hints") or ()),
            doc=d.get("doc", "") or "",
        )


@dataclass(frozen=True)
class GuardDetail:
    """One guard with the snippet line that made it; `internal` for torch's own state."""

    kind: str
    check: str
    arg: str = ""
    line: int | None = None
    code: str = ""
    note: str = ""
    internal: bool = False

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GuardDetail:
        return cls(
            kind=d.get("kind", "") or "",
            check=d.get("check", "") or "",
            arg=d.get("arg", "") or "",
            line=d.get("line"),
            code=d.get("code", "") or "",
            note=d.get("note", "") or "",
            internal=bool(d.get("internal")),
        )


@dataclass(frozen=True)
class EntryGuards:
    compile_id: str
    function: str
    guards: tuple[GuardDetail, ...]

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> EntryGuards:
        return cls(
            compile_id=str(d.get("compile_id", "")),
            function=d.get("function", "") or "",
            guards=_tuple(d.get("guards"), GuardDetail.from_dict),
        )


@dataclass(frozen=True)
class SymbolGuard:
    expr: str
    line: int | None = None

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SymbolGuard:
        return cls(expr=d.get("expr", "") or "", line=d.get("line"))


@dataclass(frozen=True)
class ShapeSymbol:
    """A symbol torch created for a size under dynamic shapes (s0, s77...)."""

    compile_id: str
    symbol: str
    source: str
    arg: str = ""
    dim: int | None = None
    value: str = ""
    range: str = ""
    line: int | None = None
    guards: tuple[SymbolGuard, ...] = ()

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ShapeSymbol:
        return cls(
            compile_id=str(d.get("compile_id", "")),
            symbol=d.get("symbol", "") or "",
            source=d.get("source", "") or "",
            arg=d.get("arg", "") or "",
            dim=d.get("dim"),
            value=str(d.get("value", "") or ""),
            range=d.get("range", "") or "",
            line=d.get("line"),
            guards=_tuple(d.get("guards"), SymbolGuard.from_dict),
        )


@dataclass(frozen=True)
class Specialization:
    """A size torch fixed to a number, with torch's own reason."""

    compile_id: str
    source: str
    value: str
    reason: str
    symbol: str = ""
    line: int | None = None

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Specialization:
        return cls(
            compile_id=str(d.get("compile_id", "") or ""),
            source=d.get("source", "") or "",
            value=str(d.get("value", "") or ""),
            reason=d.get("reason", "") or "",
            symbol=d.get("symbol", "") or "",
            line=d.get("line"),
        )


@dataclass(frozen=True)
class CallEntry:
    """Which compiled entry served one call of inputs(): status "compiled" (made during the
    call), "cached", "eager" (no entry passed, none compiled) or "unknown"."""

    call: int
    status: str
    entry: str | None = None
    compiled: tuple[str, ...] = ()
    args: tuple[tuple[str, str], ...] = ()
    why: str = ""
    summary: str = ""

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CallEntry:
        return cls(
            call=int(d.get("call", 0) or 0),
            status=d.get("status", "unknown") or "unknown",
            entry=d.get("entry"),
            compiled=tuple(d.get("compiled") or ()),
            args=tuple((str(k), str(v)) for k, v in (d.get("args") or {}).items()),
            why=d.get("why", "") or "",
            summary=d.get("summary", "") or "",
        )


@dataclass(frozen=True)
class Explanation:
    """Everything issue 11 adds, read from the report's extension keys."""

    recompiles: tuple[RecompileDetail, ...] = ()
    limits: tuple[LimitDetail, ...] = ()
    guards: tuple[EntryGuards, ...] = ()
    symbols: tuple[ShapeSymbol, ...] = ()
    specializations: tuple[Specialization, ...] = ()
    calls: tuple[CallEntry, ...] = ()

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Explanation:
        return cls(
            recompiles=_tuple(d.get("recompile_details"), RecompileDetail.from_dict),
            limits=_tuple(d.get("recompile_limit_details"), LimitDetail.from_dict),
            guards=_tuple(d.get("guard_details"), EntryGuards.from_dict),
            symbols=_tuple(d.get("shape_symbols"), ShapeSymbol.from_dict),
            specializations=_tuple(d.get("specializations"), Specialization.from_dict),
            calls=_tuple(d.get("call_entries"), CallEntry.from_dict),
        )


# --- issue 12: how it compiled (extension fields; capture.py builds them) ---------------------


def _seconds(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) else 0.0


@dataclass(frozen=True)
class CompilePhase:
    """One frame compile's time by phase, from torch's compilation_metrics: disjoint parts that
    sum to `total_s`. `aot_s` is the backend's compile outside Inductor (AOT autograd, or the
    whole backend for eager); `compile_s` the C++/Triton compilation."""

    compile_id: str
    function: str = ""
    line: int | None = None
    call: int | None = None
    pass_: str = "forward"
    dynamo_s: float = 0.0
    aot_s: float = 0.0
    inductor_s: float = 0.0
    codegen_s: float = 0.0
    compile_s: float = 0.0
    other_s: float = 0.0
    total_s: float = 0.0

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CompilePhase:
        return cls(
            compile_id=str(d.get("compile_id", "")),
            function=d.get("function", "") or "",
            line=d.get("line"),
            call=d.get("call"),
            pass_=d.get("pass", "forward") or "forward",
            **{k: _seconds(d.get(k)) for k in PHASE_KEYS + ("total_s",)},
        )


#: The phases in the order a compile runs them, with the words the views use.
PHASE_KEYS: tuple[str, ...] = ("dynamo_s", "aot_s", "inductor_s", "codegen_s", "compile_s", "other_s")
PHASE_WORDS: dict[str, str] = {
    "dynamo_s": "Dynamo",
    "aot_s": "AOT/backend",
    "inductor_s": "Inductor",
    "codegen_s": "codegen",
    "compile_s": "C++/Triton",
    "other_s": "other",
}


@dataclass(frozen=True)
class PhaseTotals:
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

    @classmethod
    def from_dict(cls, d: dict[str, Any] | None) -> PhaseTotals | None:
        if not d:
            return None
        return cls(
            **{k: _seconds(d.get(k)) for k in PHASE_KEYS + ("total_s", "first_call_s")},
            frames=int(d.get("frames", 0) or 0),
        )


@dataclass(frozen=True)
class DynamoCode:
    """One piece of code Dynamo wrote, decompiled by depyf: `kind` "transformed" (the frame's
    new bytecode), "resume" (the function that continues after a graph break; torch names it
    after the break's line, `resumes_at_line`) or "guard" (the check before a cache entry runs)."""

    name: str
    kind: str
    source: str
    function: str = ""
    resumes_at_line: int | None = None
    entry: int | None = None

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DynamoCode:
        return cls(
            name=d.get("name", "") or "",
            kind=d.get("kind", "") or "",
            source=d.get("source", "") or "",
            function=d.get("function", "") or "",
            resumes_at_line=d.get("resumes_at_line"),
            entry=d.get("entry"),
        )
