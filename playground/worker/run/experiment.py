"""One experiment: reset, load the snippet fresh, run every call eager and compiled, then
equivalence and timings. Runs inside the worker process (imports torch).

The run is a sequence of phases, each a function in its own module that returns a value:
load (loading.py), the eager reference (reference.py: another process's), compile and calls
(calls.py), diagnostics (diagnostics.py), equivalence (equivalence.py), timing (timing.py). The report is assembled from those values once, at the end;
a phase that fails ends the run with its error, and the values of the phases before it stay.

Order matters for honesty: diagnostics first (what torch did), then equivalence (is the
result right), then timings (is it faster) - a speedup of a wrong or half-compiled program
is never reported without its graph and break counts beside it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from types import MappingProxyType
from typing import Any

import torch

from playground.engine.report import (
    DdpBuckets,
    Equivalence,
    GuardCost,
    GuardWhatIf,
    KernelsProfile,
    Report,
    RunError,
    Timings,
)
from playground.engine.settings import Settings
from playground.worker import compat
from playground.worker.capture import diagnostics, refusals
from playground.worker.capture.records import Capturer, RunCapture
from playground.worker.run import ranks
from playground.worker.run.compare import equivalence
from playground.worker.run.compare.reference import References
from playground.worker.run.passes import guard_what_if, kernels_profile
from playground.worker.run.programs import program
from playground.worker.run.spine import loading, malloc, switches, trace_met
from playground.worker.run.spine.calls import CallsDone, run_calls
from playground.worker.run.spine.context import Emit, RunContext
from playground.worker.run.spine.failures import Cancelled, RunFailure, unexpected
from playground.worker.run.spine.request import WorkerRequest
from playground.worker.run.timing import guard_cost, timing


@dataclass(frozen=True)
class Outcome:
    """What a run gives the worker: the report, the trace when asked for (kept apart from the
    report: never part of the JSON contract), and whether the run used Inductor (a later run in
    the same process then finds Inductor started)."""

    report: Report
    trace: dict[str, Any] | None = None
    used_inductor: bool = False


def run_experiment(
    capturer: Capturer,
    request: WorkerRequest,
    emit: Emit,
    cancelled: Callable[[], bool] = lambda: False,
    on_timing_start: Callable[[], None] | None = None,
    *,
    inductor_started: bool = False,
) -> Outcome:
    """One run of one snippet under one set of settings. `inductor_started`: this process has
    run Inductor before (its one-time start-up is then not in the cold compile)."""
    started = time.perf_counter()
    ctx = RunContext(request, emit, cancelled)
    base = Report(torch_version=torch.__version__, settings=request.run.settings, snippet=request.run.path)
    warning = compat.version_warning()
    if warning:
        ctx.notes.append(warning)
    problem = settings_problem(request)
    if problem is not None:
        return Outcome(_finish(replace(base, error=problem), ctx, started))
    if request.run.program is None:  # a program's own torch.compile calls choose its backend
        ctx.notes += settings_notes(request.run.settings)
    compat.clear_run_state()
    malloc.before_run()  # freed memory kept while it loads and compiles (malloc.py)
    # What the trace meets, for the template to warm for the next run (trace_met.py).
    met = trace_met.Recorder(request)
    capture = capturer.begin(request.run.path, keep_trace_lines=request.run.trace, env_logs=not request.warmup)
    if request.run.program is not None:
        program_report = _program_report(ctx, capturer, capture, base)
        met.write()
        trace = diagnostics.trace_payload(capture) if request.run.trace else None
        return Outcome(_finish(program_report, ctx, started), trace)
    phases = Phases(ctx, capturer, capture, on_timing_start, first_inductor=not inductor_started)
    if request.run.flags.timeout_s:
        # What starts after this would be cut by the template's kill, the whole report with it.
        phases.deadline = started + request.run.flags.timeout_s - max(1.0, 0.1 * request.run.flags.timeout_s)
    references = References(ctx)
    scope = loading.SnippetScope(request.run.path, f"compile_playground_snippet_{request.id}", not request.warmup)
    error: RunError | None = None
    try:
        with (
            compat.compile_caches_disabled(request.run.settings.cold),
            compat.deterministic_inductor_rng(),
            switches.applied(request.run.settings),
        ):
            phases.run(scope, base, references)
    except RunFailure as failure_:
        error = failure_.error
    except Cancelled:
        raise
    except Exception as exc:  # noqa: BLE001 - whoever raised, what was captured stays
        error = unexpected(exc, request.run.path, ctx.doing)
    finally:
        capturer.end()
        local_modules = scope.close()
        met.write()
    # torch's text of the error read once, here: the refused break, the missing package.
    error = refusals.read_error(error, request.run.settings.fullgraph)
    report = replace(phases.report(base), error=error, local_modules=tuple(local_modules))
    trace = diagnostics.trace_payload(capture) if request.run.trace else None
    return Outcome(_finish(report, ctx, started), trace, used_inductor=request.run.settings.backend == "inductor")


def _program_report(ctx: RunContext, capturer: Capturer, capture: RunCapture, base: Report) -> Report:
    """A program's run (program.py) under the run's switches; what it captured stays whatever
    ends it."""
    settings = ctx.request.run.settings
    try:
        with (
            compat.compile_caches_disabled(settings.cold),
            switches.applied(settings),
        ):
            return program.run_program(ctx, capture, base)
    except RunFailure as failure_:
        return replace(diagnostics.read(capture).apply(base), kind="program", error=failure_.error)
    except Cancelled:
        raise
    except Exception as exc:  # noqa: BLE001 - whoever raised, what was captured stays
        found = diagnostics.read(capture).apply(base)
        return replace(found, kind="program", error=unexpected(exc, ctx.request.run.path, ctx.doing))
    finally:
        capturer.end()


def settings_problem(request: WorkerRequest) -> RunError | None:
    """A setting this worker cannot run: settings that do not read, cuda without a device, a
    config key or value torch lacks."""
    if request.settings_problem:
        return RunError(kind="settings", type="BadSettings", message=request.settings_problem)
    settings = request.run.settings
    if settings.device.startswith("cuda") and not torch.cuda.is_available():
        return RunError(
            kind="settings",
            type="DeviceUnavailable",
            message="device cuda requested but this torch has no CUDA device "
            f"(torch {torch.__version__}, cuda build: {torch.version.cuda or 'none'}); use --device cpu",
        )
    problem = switches.problem(settings)
    if problem is not None:
        return RunError(kind="settings", type="BadConfig", message=problem)
    return None


def settings_notes(settings: Settings) -> list[str]:
    notes = []
    if settings.backend == "inductor":
        notes.append(
            "Inductor runs with fallback_random=True so that dropout draws the same numbers as eager; "
            "in a plain script Inductor's RNG differs from eager's"
        )
    if settings.mode and settings.backend != "inductor":
        notes.append(f"mode {settings.mode} ignored: only the inductor backend takes a mode")
    return notes


def nothing_compiled(settings: Settings, report: Report) -> str | None:
    """A run whose calls all ran eagerly says so and why, when we can tell: "graphs 0, equiv ok"
    alone would read as a clean compile (a negative recompile_limit, say, makes torch skip every
    frame without a word)."""
    if report.graph_count or report.error is not None or not report.calls:
        return None
    why = []
    for key in ("dynamo.recompile_limit", "dynamo.cache_size_limit"):
        value = dict(settings.config).get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value <= 0:
            why.append(f"{key}={value} lets no frame be compiled")
    if settings.stance != "default":
        why.append(f"the stance is {settings.stance}")
    if report.recompile_limit_hit:
        why.append("the recompile limit was hit")
    reason = "; ".join(why) or "Dynamo traced no tensor operation in the target, or skipped its frame"
    return (
        f"torch compiled no graph: every call ran eagerly ({reason}); equivalence and timings compare eager with eager"
    )


def _finish(report: Report, ctx: RunContext, started: float) -> Report:
    if report.timings is not None:
        ctx.waterfall.compile_inside_calls(report.compile_phase_totals)
        report = replace(report, timings=replace(report.timings, save=ctx.waterfall.result()))
    return replace(report, notes=tuple(ctx.notes), duration_s=round(time.perf_counter() - started, 4), stage="complete")


class Traced:
    """What Dynamo decided, sent as soon as it has traced a graph and before the backend compiles
    it: on a real model Dynamo takes seconds and Inductor tens of seconds more, and the break is
    what the user came for. Sent at most every INTERVAL_S (small snippets never wait that long),
    as a "diagnostics" event whose report has stage "traced"."""

    INTERVAL_S = 0.5

    def __init__(self, ctx: RunContext, phases: Phases, base: Report) -> None:
        self.ctx = ctx
        self.phases = phases
        self.base = base
        self.last = time.perf_counter()

    def __call__(self, graph: int, ops: int) -> None:
        ctx = self.ctx
        call = ctx.current_call
        ctx.progress(
            "compiling", f"call {call}: graph {graph} traced ({ops} ops), {ctx.settings.backend} compiling it", call
        )
        if ctx.silent or time.perf_counter() - self.last < self.INTERVAL_S:
            return
        try:
            found = diagnostics.read(self.phases.capture).apply(self.base)
            early = replace(found, stage="traced", calls=max(call - 1, 0), notes=tuple(ctx.notes))
            ctx.emit({"event": "diagnostics", "report": early.to_dict()})
        except Exception:  # noqa: BLE001 - we are inside torch's compile: a courtesy must never fail it
            pass
        self.last = time.perf_counter()


class Phases:
    """The phases of one run in order, keeping each one's value as it completes: a run that
    fails in a phase still reports what the phases before it found."""

    def __init__(
        self,
        ctx: RunContext,
        capturer: Capturer,
        capture: RunCapture,
        on_timing_start: Callable[[], None] | None,
        first_inductor: bool,
    ) -> None:
        self.ctx = ctx
        self.capturer = capturer
        self.capture = capture
        self.on_timing_start = on_timing_start
        self.first_inductor = first_inductor
        self.calls = 0
        #: Seconds spent in each phase, so a reader can tell torch's time from ours (reported
        #: once the calls have run).
        self.phase_s: dict[str, float] | None = None
        self.diagnostics: diagnostics.Diagnostics | None = None
        self.equivalence: Equivalence | None = None
        self.timings: Timings | None = None
        self.guard_cost: GuardCost | None = None
        self.kernels: KernelsProfile | None = None
        self.guard_what_if: GuardWhatIf | None = None
        self.ddp_buckets: DdpBuckets | None = None
        #: perf_counter time past which no optional pass starts (None: no timeout).
        self.deadline: float | None = None
        #: Set once the calls' diagnostics are final (before the timing loop).
        self.frozen = False

    def run(self, scope: loading.SnippetScope, base: Report, references: References) -> None:
        """The phases in order: load, calls and their diagnostics, equivalence, timing, passes."""
        loaded, done = self.load_and_call(scope, base, references)
        self._compare(loaded, done, references)
        self._time(loaded, done)
        self._passes(loaded, done)

    def load_and_call(
        self, scope: loading.SnippetScope, base: Report, references: References
    ) -> tuple[loading.Loaded, CallsDone]:
        """Load the snippet, make the compiled calls and send what they made torch do."""
        ctx = self.ctx
        t0 = time.perf_counter()
        ctx.waterfall.begin("load")
        module = loading.load(ctx, scope)
        ctx.waterfall.end("load")
        load_s = time.perf_counter() - t0
        # The reference loads the snippet only now: what its module-level code does once (write
        # a file, delete one) it does after the compiled run's load, always in that order. Across
        # ranks it waits for the diagnostics: N ranks and N references would share the cores on
        # the path to the first findings.
        if ctx.request.rank is None:
            references.start()
        loaded = loading.prepare(ctx, module)
        t1 = time.perf_counter()
        ctx.waterfall.begin("calls")
        try:
            done = run_calls(ctx, loaded, self.capture, Traced(ctx, self, base))
        except RunFailure as failure_:
            raise self._blamed(failure_, references) from None
        self.calls = len(done.records)
        ctx.waterfall.end("calls")
        ctx.waterfall.begin("diagnostics")
        self.phase_s = {"load": load_s, "calls": time.perf_counter() - t1}
        self.diagnostics = diagnostics.read(self.capture)
        self.ddp_buckets = ranks.ddp_buckets(loaded.target, self.capture.graphs)
        found = self.report(base)
        note = nothing_compiled(ctx.settings, found)
        if note:
            ctx.notes.append(note)
        if not ctx.silent:
            early = replace(found, stage="diagnostics", notes=tuple(ctx.notes))
            ctx.emit({"event": "diagnostics", "report": early.to_dict()})
        ctx.waterfall.end("diagnostics")
        return loaded, done

    def _compare(self, loaded: loading.Loaded, done: CallsDone, references: References) -> None:
        """The eager reference's calls against the compiled ones."""
        ctx = self.ctx
        references.start()
        t2 = time.perf_counter()
        ctx.waterfall.begin("reference")
        eager = references.eager()  # long done, mostly: it ran while the calls compiled
        ctx.waterfall.end("reference")
        ctx.waterfall.begin("equivalence")
        if eager.error is not None and eager.failed_call is not None:
            raise RunFailure.of(eager.error)  # the target raised in eager too: the snippet's error
        if eager.error is not None or not eager.calls:
            why = eager.error.message if eager.error is not None else (eager.note or "it made no call")
            ctx.notes.append(
                "equivalence not checked: the eager reference loads the snippet again, in a process of "
                f"its own, and could not: {why}"
            )
        else:
            self.equivalence = equivalence.check(ctx, done.records, eager, done.tracker, loaded, references.float64)
        self.phase_s["equivalence"] = time.perf_counter() - t2
        ctx.waterfall.end("equivalence")

    def _time(self, loaded: loading.Loaded, done: CallsDone) -> None:
        """Freeze the diagnostics, then time both sides (when asked)."""
        ctx = self.ctx
        # What the calls made torch do is read now: the timing loop's extra calls never count
        # (graphs it compiles are reported apart, as a finding of the timing).
        self.diagnostics = diagnostics.refresh(self.capture, self.diagnostics)
        self.frozen = True
        if ctx.request.run.flags.timing:
            # Diagnostics and output describe the calls of inputs(); the thousands of timed
            # repetitions would only drown them.
            self.capturer.pause()
            malloc.as_a_plain_process()  # timed as in the user's own process (malloc.py)
            if self.on_timing_start is not None:
                self.on_timing_start()
            t3 = time.perf_counter()
            ctx.waterfall.begin("timing")
            graphs = len(self.capture.graphs)
            found = self.diagnostics.report
            frames = found.graph_count + found.graph_break_count
            timings = timing.time_calls(ctx, done, loaded.target, self.first_inductor, frames)
            during = len(self.capture.graphs) - graphs
            del self.capture.graphs[graphs:]
            self.timings = replace(timings, graphs_during_timing=during) if during else timings
            if during:
                ctx.notes.append(
                    f"recompiles during timing: {during} more graph(s) compiled while timing the last call, "
                    "so the steady state was never reached; the speedup measures recompiling"
                )
            self.phase_s["timing"] = time.perf_counter() - t3
            ctx.waterfall.end("timing")

    def _passes(self, loaded: loading.Loaded, done: CallsDone) -> None:
        """After the timing, never inside it: the guards' cost, then the passes asked for."""
        ctx = self.ctx
        # The guard checks are timed on their own.
        self.guard_cost = guard_cost.guard_cost(done, loaded.target, self.timings)
        if ctx.request.run.passes.kernels and ctx.settings.backend == "inductor":
            self.capturer.pause()  # the profiled calls are not the run's diagnostics
            if self.on_timing_start is not None:  # nor is what they print (the profiler's own lines)
                self.on_timing_start()
            ctx.progress("timing", "profiling the kernels of the timed call", done.records[-1].index)
            self.kernels = kernels_profile.profile(done, loaded.target, self.capture, self.timings, ctx.settings.device)
            if self.guard_cost is not None:
                self.guard_cost = replace(self.guard_cost, lookup_us=self.kernels.lookup_us)
        elif ctx.request.run.passes.kernels:
            self.kernels = KernelsProfile(
                note=f"not profiled: only Inductor writes kernels (backend {ctx.settings.backend})"
            )
        if ctx.request.run.passes.guard_what_if:
            # Last: it resets Dynamo and recompiles the target, so nothing after it could read
            # the run's own cache entries.
            self.capturer.pause()  # its compile and calls are not the run's diagnostics
            self.guard_what_if = guard_what_if.what_if(
                ctx,
                done,
                loaded.target,
                done.tracker,
                calls_s=(self.phase_s or {}).get("calls", 0.0),
                deadline=self.deadline,
                on_output=self.on_timing_start,
            )

    def _blamed(self, failure_: RunFailure, references: References) -> RunFailure:
        """A compiled call that raised is torch.compile's finding, unless eager raised on that
        call (or before) too: then it is the snippet's, as it always was."""
        if failure_.error.kind != "compile":
            return failure_
        eager = references.eager()
        failed = eager.failed_call
        if eager.error is not None and failed is not None and failed <= max(self.ctx.current_call, 1):
            return RunFailure.of(eager.error)
        return failure_

    def report(self, base: Report) -> Report:
        """`base` with what the phases have found so far; the diagnostics read once, then only
        refreshed where equivalence added to the capture (diagnostics.refresh)."""
        if self.diagnostics is None:
            found = diagnostics.read(self.capture)
        elif self.frozen:
            found = self.diagnostics
        else:
            found = diagnostics.refresh(self.capture, self.diagnostics)
        return replace(
            found.apply(base),
            calls=self.calls,
            phase_s=None if self.phase_s is None else MappingProxyType(dict(self.phase_s)),
            equivalence=self.equivalence,
            timings=self.timings,
            guard_cost=self.guard_cost,
            kernels_profile=self.kernels,
            guard_what_if=self.guard_what_if,
            ddp_buckets=self.ddp_buckets,
        )
