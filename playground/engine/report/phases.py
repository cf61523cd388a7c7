"""How long each compile spent in each phase (extension fields; the worker's capture/ builds them)."""

from __future__ import annotations

from dataclasses import dataclass

from playground.engine.report.wire import Wire, absent_if_none, wire


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
    first_run_s: float | None = wire(None, omit=absent_if_none("first_run_s"))


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
    first_run_s: float | None = wire(None, omit=absent_if_none("first_run_s"))
    first_call_run_s: float | None = wire(None, omit=absent_if_none("first_call_run_s"))
