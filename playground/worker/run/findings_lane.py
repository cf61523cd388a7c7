"""The findings lane's run: the snippet loaded and its calls made compiled with backend
"eager", Dynamo's findings read from the capture, and nothing after (no reference, no
equivalence, no timing). It runs in a process beside the run's child while the run's slow
backend compiles (process/findings_lane.py forks it; playground/engine/findings.py says when).
The calls are the run's own phase (experiment.Phases.load_and_call), so what it finds is what
the run finds wherever the backend does not change Dynamo's decisions. Worker-side.
"""

from __future__ import annotations

import re
from dataclasses import replace

import torch

from playground.engine.findings import LANE_BACKEND
from playground.engine.passes import NO_PASSES
from playground.engine.report import Report, RunError
from playground.worker import compat
from playground.worker.capture import refusals
from playground.worker.capture.records import Capturer
from playground.worker.run.compare.reference import References, SideResult
from playground.worker.run.experiment import Phases, settings_problem
from playground.worker.run.spine import loading, switches
from playground.worker.run.spine.context import RunContext
from playground.worker.run.spine.failures import Cancelled, RunFailure, unexpected
from playground.worker.run.spine.request import WorkerRequest


class _NoReferences(References):
    """The lane compares nothing: no eager reference is started or waited for."""

    def start(self) -> None:
        self.started = True

    def eager(self) -> SideResult:
        return SideResult(note="the findings lane has no reference")


def lane_request(request: WorkerRequest) -> WorkerRequest:
    """The run as the lane makes it: backend eager, no timing, no passes, no trace, no references."""
    run = request.run
    settings = replace(run.settings, backend=LANE_BACKEND, mode=None)
    return replace(
        request.with_run(
            prepared=replace(run.prepared, settings=settings),
            flags=replace(run.flags, timing=False),
            passes=NO_PASSES,
            trace=False,
        ),
        references=None,
        held=False,
    )


def findings(capturer: Capturer, request: WorkerRequest, threads: tuple[int, int] | None = None) -> Report | None:
    """Dynamo's findings in the run's calls, as a report of stage "findings" under the run's own
    settings; None when the run cannot start (a setting it refuses: the run reports that).
    `threads`: the run's torch thread count and the lane's own (one fewer, limits.py)."""
    lane = lane_request(request)
    if settings_problem(lane) is not None or settings_problem(request) is not None:
        return None
    ctx = RunContext(lane, lambda event: None, lambda: False)
    ctx.silent = True  # its one message is the FindingsEvent the lane's process sends
    base = Report(torch_version=torch.__version__, settings=lane.run.settings, snippet=lane.run.path)
    compat.clear_run_state()
    capture = capturer.begin(lane.run.path, keep_trace_lines=False)
    phases = Phases(ctx, capturer, capture, None, first_inductor=False)
    scope = loading.SnippetScope(lane.run.path, f"compile_playground_snippet_{request.id}", not request.warmup)
    error: RunError | None = None
    try:
        with switches.applied(lane.run.settings):
            phases.load_and_call(scope, base, _NoReferences(ctx))
    except RunFailure as failure_:
        error = failure_.error
    except Cancelled:
        raise
    except Exception as exc:  # noqa: BLE001 - whoever raised, what was captured stays
        error = unexpected(exc, lane.run.path, ctx.doing)
    finally:
        capturer.end()
        scope.close()
    error = refusals.read_error(error, lane.run.settings.fullgraph)
    found = replace(phases.report(base), error=error)
    if threads is not None and torch.get_num_threads() == threads[1]:
        found = threads_as_the_run(found, *threads)
    return replace(found, settings=request.run.settings, stage="findings", notes=tuple(ctx.notes))


def threads_as_the_run(report: Report, run: int, lane: int) -> Report:
    """The report with Dynamo's global-state guard as the run records it: the lane traced on
    `lane` torch threads (one fewer than the run, limits.set_lane_threads), which that guard
    holds; the run holds `run`. Only where the snippet left the count as the lane set it (one
    that sets its own has the same count in both processes)."""
    if run == lane:
        return report
    pattern = re.compile(rf'("num_threads":\s*){lane}\b')

    def fixed(text: str) -> str:
        return pattern.sub(rf"\g<1>{run}", text) if "num_threads" in text else text

    sets = tuple(replace(entry, guards=tuple(fixed(g) for g in entry.guards)) for entry in report.guards)
    details = tuple(
        replace(
            entry,
            guards=tuple(
                replace(g, check=fixed(g.check), code=fixed(g.code), short=fixed(g.short), leaf=fixed(g.leaf))
                for g in entry.guards
            ),
        )
        for entry in report.explanation.guards
    )
    return replace(report, guards=sets, explanation=replace(report.explanation, guards=details))
