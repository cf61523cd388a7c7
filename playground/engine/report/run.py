"""The report of one run, the top-level JSON object: its fields in the object's key order."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from playground.engine.report.anatomy import GraphAnatomy
from playground.engine.report.breaks import BreakSite, GraphBreak
from playground.engine.report.dynamo_code import DynamoCode
from playground.engine.report.equivalence import Equivalence
from playground.engine.report.error import RunError
from playground.engine.report.explanation import Explanation
from playground.engine.report.fixes import Fix, FixAdvice
from playground.engine.report.graphs import Graph
from playground.engine.report.guard_cost import GuardCost
from playground.engine.report.guard_what_if import GuardWhatIf
from playground.engine.report.guards import GuardSet
from playground.engine.report.kernels import KernelsProfile
from playground.engine.report.logs import Logs
from playground.engine.report.output import Output
from playground.engine.report.phases import CompilePhase, PhaseTotals
from playground.engine.report.program import CompiledCallable, ProgramExit, ProgramRun, Stopped
from playground.engine.report.ranks import DdpBuckets, Divergence
from playground.engine.report.recompiles import Recompile
from playground.engine.report.timings import Timings
from playground.engine.report.wire import Wire, absent_if_empty, absent_if_none, wire
from playground.engine.report.worker_info import WorkerInfo
from playground.engine.settings import Settings


def _not_a_program(report: Report) -> bool:
    return report.kind != "program"


def _one_process(report: Report) -> bool:
    return report.world_size is None


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
    phase_s: Mapping[str, float] | None = wire(None, omit=absent_if_none("phase_s"))
    #: The snippet's own modules it imported from its folder (a change to one reruns it).
    local_modules: tuple[str, ...] = ()
    duration_s: float | None = None
    output: Output = field(default_factory=Output)
    worker: WorkerInfo | None = None
    content_sha256: str = ""
    wall_s: float | None = None
    worker_restarted: bool = False
    worker_restart_reason: str = wire("", omit=absent_if_empty("worker_restart_reason"))
    #: What each compile did: nodes, kernels, caches, config (extension keys, absent
    #: when empty so that a report without them prints as it always did).
    compile_anatomy: tuple[GraphAnatomy, ...] = wire((), omit=absent_if_empty("compile_anatomy"))
    #: The breaks grouped by site and torch's break type, with its hint category.
    break_sites: tuple[BreakSite, ...] = wire((), omit=absent_if_empty("break_sites"))
    #: What the guards cost the timed call (None: not measured in this run).
    guard_cost: GuardCost | None = wire(None, omit=absent_if_none("guard_cost"))
    #: Inductor's kernels of the timed call, profiled after the timing (None: not asked for).
    kernels_profile: KernelsProfile | None = wire(None, omit=absent_if_none("kernels_profile"))
    #: What a guard filter or skip_guard_eval_unsafe would save the timed call, measured after
    #: the timing on request (None: not asked for).
    guard_what_if: GuardWhatIf | None = wire(None, omit=absent_if_none("guard_what_if"))
    #: "snippet", or "program": a file run as `python FILE` runs it, whose own torch.compile
    #: calls made the compiled callables below (engine/program.py).
    kind: str = "snippet"
    callables: tuple[CompiledCallable, ...] = wire((), omit=_not_a_program)
    stopped: Stopped | None = wire(None, omit=_not_a_program)
    program_exit: ProgramExit | None = wire(None, omit=_not_a_program)
    #: How the program was asked to run: its argv, bounds, the toggled settings and their target.
    program: ProgramRun | None = wire(None, omit=_not_a_program)
    #: Across ranks (Settings.ranks > 1): how many processes torch.distributed joined, each
    #: one's report (indexed by rank; the keys above describe rank 0), and what differs.
    world_size: int | None = wire(None, omit=_one_process)
    ranks: tuple[Report, ...] = wire((), omit=_one_process)
    divergence: tuple[Divergence, ...] = wire((), omit=_one_process)
    #: A DDP-wrapped target's graphs as DDP's optimizer cut them; absent for any other target.
    ddp_buckets: DdpBuckets | None = wire(None, omit=absent_if_none("ddp_buckets"))
    #: Fixes tried (--try-fixes; the app's key on the Breaks and Recomp panes): each remedy's
    #: variant run, best first; and the targets no remedy removed, with torch's documented rewrite.
    fixes: tuple[Fix, ...] = wire((), omit=absent_if_empty("fixes"))
    fix_advice: tuple[FixAdvice, ...] = wire((), omit=absent_if_empty("fix_advice"))

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
        counts = (
            f"graphs {self.graph_count}  breaks {self.graph_break_count}  "
            f"recompiles {self.recompile_count}  equiv {self.equivalence_word}"
        )
        if self.kind == "program":
            # Speedups are per callable, in its section beside its own break count.
            return counts + ("  stopped" if self.stopped is not None else "")
        speedup = "n/a"
        if self.timings is not None and self.timings.speedup is not None:
            speedup = "unreliable" if self.timings.unreliable else f"{self.timings.speedup:.2f}x"
        return f"{counts}  speedup {speedup}"
