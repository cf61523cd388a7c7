"""The settings matrix: one snippet under every fullgraph x dynamic x backend, one warm worker.

It answers "which settings forbid or allow the failure I am looking at" at a glance. Torch-free.

`--ladder` runs torch's troubleshooting ladder for a wrong result instead: the same settings
under eager -> aot_eager -> aot_eager_decomp_partition -> inductor (and the inductor modes
asked for), and names the first stage whose values or gradients stop agreeing with eager,
with that stage's largest difference: the bisection torch's docs describe, done in one go.
"""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Callable
from dataclasses import asdict, dataclass, replace
from typing import Any

from playground.engine.errors import RunCancelled
from playground.engine.program import ProgramOptions
from playground.engine.report import Comparison, Equivalence, PhaseTotals, Report
from playground.engine.run_request import RunFlags, RunRequest
from playground.engine.settings import Settings
from playground.engine.snippet import prepared_as_given

DEFAULT_BACKENDS = ("eager", "inductor")
#: torch's troubleshooting ladder, each stage adding one layer: Dynamo's graph (eager), AOT
#: autograd's joint graph (aot_eager), Inductor's decompositions and partitioner
#: (aot_eager_decomp_partition), then Inductor's code generation.
LADDER_BACKENDS = ("eager", "aot_eager", "aot_eager_decomp_partition", "inductor")


@dataclass(frozen=True)
class Cell:
    """One combination's outcome."""

    fullgraph: bool
    dynamic: bool | None
    backend: str
    graphs: int
    breaks: int
    recompiles: int
    limit_hit: bool
    raised: str | None
    error_kind: str | None
    equivalence: str  # "ok" | "FAIL" | "n/a"
    compile_s: float | None
    speedup: float | None
    #: The inductor mode the cell ran with (the ladder runs inductor under several).
    mode: str | None = None
    #: The largest |eager - compiled| over every output and gradient compared, and the
    #: relative one; None when nothing was compared.
    max_abs: float | None = None
    max_rel: float | None = None
    #: What stopped agreeing: "values", "gradients", or None.
    diverged: str | None = None
    #: Compile time by phase, summed over the run's frame compiles from torch's
    #: compilation metrics: Dynamo's tracing, and everything after it hands the graph over
    #: (AOT autograd, Inductor, C++/Triton, torch's bookkeeping). None when torch reported none.
    dynamo_s: float | None = None
    backend_s: float | None = None
    #: Why the speedup is not to be believed ("" when it is): the report's timings.unreliable.
    speedup_unreliable: str = ""
    #: The cell's wall time, request to report (what the next cells will take, roughly).
    seconds: float | None = None

    @property
    def speedup_word(self) -> str:
        """ "2.31x", "unrel." (the measurement says it is not to be believed) or "" (none)."""
        if self.speedup is None:
            return ""
        return "unrel." if self.speedup_unreliable else f"{self.speedup:.2f}x"

    @classmethod
    def from_report(cls, settings: Settings, report: Report) -> Cell:
        error = report.error
        timings = report.timings
        raised = None
        if error is not None:
            raised = f"{error.type}: {error.message}".splitlines()[0][:160]
        return cls(
            fullgraph=settings.fullgraph,
            dynamic=settings.dynamic,
            backend=settings.backend,
            graphs=report.graph_count,
            breaks=report.graph_break_count,
            recompiles=report.recompile_count,
            limit_hit=report.recompile_limit_hit,
            raised=raised,
            error_kind=error.kind if error is not None else None,
            equivalence=report.equivalence_word,
            compile_s=timings.compile_s if timings is not None else None,
            speedup=timings.speedup if timings is not None else None,
            mode=settings.mode,
            speedup_unreliable=timings.unreliable if timings is not None else "",
            seconds=report.wall_s,
            **_differences(report.equivalence),
            **_compile_split(report.compile_phase_totals),
        )

    @property
    def stage(self) -> str:
        """The ladder's name for the cell: its backend, with the mode when there is one."""
        return f"{self.backend} {self.mode}" if self.mode else self.backend

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _differences(eq: Equivalence | None) -> dict[str, Any]:
    """max_abs, max_rel and what diverged first (values before gradients), from a report's
    equivalence: the numbers the ladder reports for its stage."""
    outputs, grads = (list(eq.outputs), list(eq.grads)) if eq is not None else ([], [])

    def biggest(entries: list[Comparison], key: str) -> float | None:
        found = [getattr(e, key) for e in entries if getattr(e, key) is not None]
        return max(found) if found else None

    diverged = None
    if any(not o.ok for o in outputs):
        diverged = "values"
    elif any(not g.ok for g in grads):
        diverged = "gradients"
    # The stage's difference is that of what diverged; else the largest seen anywhere.
    chosen = outputs if diverged == "values" else grads if diverged == "gradients" else outputs + grads
    if diverged:
        chosen = [e for e in chosen if not e.ok]
    return {"max_abs": biggest(chosen, "max_abs"), "max_rel": biggest(chosen, "max_rel"), "diverged": diverged}


def _compile_split(totals: PhaseTotals | None) -> dict[str, float | None]:
    """dynamo_s and backend_s from a report's compile_phase_totals; both None without one
    (no frame compiled, or an older worker)."""
    if totals is None:
        return {"dynamo_s": None, "backend_s": None}
    dynamo = totals.dynamo_s
    # The phases are disjoint and sum to total_s: the rest is the backend's.
    return {"dynamo_s": round(dynamo, 6), "backend_s": round(max(totals.total_s - dynamo, 0.0), 6)}


def compile_split_words(cell: Cell) -> str:
    """ "0.190/1.85s": the cell's compile time, Dynamo's part / the backend's; "" without one."""
    if cell.dynamo_s is None or cell.backend_s is None:
        return ""
    return f"{cell.dynamo_s:.3f}/{cell.backend_s:.3f}s"


def combinations(base: Settings, backends: tuple[str, ...] = DEFAULT_BACKENDS) -> list[Settings]:
    """Every fullgraph x dynamic x backend, the base's other settings (mode, device, cold and
    torch's own switches) kept."""
    out = []
    for backend, fullgraph, dynamic in itertools.product(backends, (False, True), (None, True, False)):
        mode = base.mode if backend == "inductor" else None
        out.append(replace(base, fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode))
    return out


def ladder_stages(base: Settings, modes: tuple[str | None, ...] = (None,)) -> list[Settings]:
    """The ladder's runs: the base settings under each stage's backend, inductor once per mode
    asked for (None: torch.compile's default mode)."""
    out = [replace(base, backend=backend, mode=None) for backend in LADDER_BACKENDS[:-1]]
    for mode in dict.fromkeys(modes or (None,)):
        out.append(replace(base, backend="inductor", mode=mode))
    return out


@dataclass(frozen=True)
class Divergence:
    """The first ladder stage that stops agreeing with eager."""

    index: int
    stage: str
    what: str  # "values" | "gradients" | "raised"
    max_abs: float | None
    max_rel: float | None
    message: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def first_divergence(cells: list[Cell]) -> Divergence | None:
    """The first stage whose values or gradients differ from eager's beyond the tolerance, or
    whose compiled run raised (a finding about that stage). Stages that could not run at all
    (the snippet's own error, a backend that is not installed) are passed over: they say
    nothing about where the numbers go wrong."""
    for index, cell in enumerate(cells):
        if cell.error_kind == "compile":
            return Divergence(index, cell.stage, "raised", None, None, f"{cell.stage} raised: {cell.raised}")
        if cell.error_kind is None and cell.equivalence == "FAIL":
            what = cell.diverged or "values"
            size = "" if cell.max_abs is None else f", max abs diff {cell.max_abs:.3g}"
            return Divergence(index, cell.stage, what, cell.max_abs, cell.max_rel, f"{cell.stage}: {what} differ{size}")
    return None


def ladder_summary(cells: list[Cell], total: int | None = None) -> str:
    """One line: the first stage that diverges, or that every stage run agrees."""
    found = first_divergence(cells)
    if found is not None:
        before = ", ".join(c.stage for c in cells[: found.index]) or "nothing"
        return f"first divergence: {found.message} (agree before it: {before})"
    ran = [c for c in cells if c.error_kind is None]
    skipped = [c.stage for c in cells if c.error_kind is not None]
    unfinished = "" if total is None or total == len(cells) else f" so far ({len(cells)}/{total})"
    if cells and not ran:
        # Nothing to compare: "no divergence" would read as a clean bill of health.
        first = next((c for c in cells if c.raised), cells[0])
        why = "the snippet fails on its own" if first.error_kind == "snippet" else "no stage could run"
        return f"no verdict{unfinished}: {why} ({first.stage}: {first.raised}); could not run: {', '.join(skipped)}"
    text = f"no divergence{unfinished}: {len(ran)} stage(s) agree with eager"
    return text + (f"; could not run: {', '.join(skipped)}" if skipped else "")


def remaining_words(done: list[Cell], left: int) -> str:
    """ "41 s a cell, about 3 min 25 s left" from the cells done so far; "" before the first."""
    times = [c.seconds for c in done if c.seconds is not None]
    if not times or left <= 0:
        return ""
    each = sum(times) / len(times)
    return f"{_duration(each)} a cell, about {_duration(each * left)} left"


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f} s" if seconds >= 10 else f"{seconds:.1f} s"
    minutes, rest = divmod(int(round(seconds)), 60)
    return f"{minutes} min {rest} s" if rest else f"{minutes} min"


#: The settings a matrix varies: for a program, these replace its own torch.compile arguments.
MATRIX_AXES = ("fullgraph", "dynamic", "backend")

#: A cell's timings: on, and shorter than a single run's, since a matrix times every cell.
MATRIX_FLAGS = RunFlags(timing=True, min_run_time=0.05)


async def run_matrix(
    client: Any,
    path: str,
    cells: list[Settings],
    *,
    flags: RunFlags = MATRIX_FLAGS,
    on_progress: Callable[[int, int, Settings], None] | None = None,
    program: ProgramOptions | None = None,
    axes: tuple[str, ...] = MATRIX_AXES,
) -> AsyncIterator[tuple[int, Cell]]:
    """Yield (index, cell) as each combination finishes; cancel with client.cancel(). `client`
    is a WorkerClient or anything with its async run(). Each cell reads the file again, under
    its own settings as given (a cell is its combination, whatever the snippet's SETTINGS say).
    A program (`program`'s rule) runs each cell with the matrix's `axes` laid over its own
    torch.compile arguments, and the rest as it wrote them."""
    options = program or ProgramOptions()
    for i, settings in enumerate(cells):
        if on_progress is not None:
            on_progress(i, len(cells), settings)
        try:
            prepared = prepared_as_given(path, settings)
            text = prepared.source.text if prepared.source else None
            request = RunRequest(prepared, flags, program=options.run_for(text, axes))
            result = await client.run(request)
        except RunCancelled:
            return
        yield i, Cell.from_report(settings, result.report)
