"""A compiled callable's speedup from the program's own calls: its compared calls as the
program made them, compiled against the same calls in the eager reference. Worker-side.
"""

from __future__ import annotations

import statistics

import torch

from playground.engine.report import Timings
from playground.worker.run.programs.made import Made
from playground.worker.run.programs.program_reference import ProgramCall

#: Fewer steady calls than this on a side: its median is shown, the speedup marked unreliable.
MIN_TIMED = 5
#: A side whose calls' IQR is more than this share of their median: the speedup is unreliable.
MAX_SPREAD = 0.5


def timings_of(m: Made, ours: list[ProgramCall], theirs: list[ProgramCall]) -> Timings | None:
    """The callable's steady state as the program made its calls: the calls that compiled
    nothing (and not the first), compiled against the same calls made eagerly."""
    steady = [(a, b) for a, b in zip(ours, theirs, strict=True) if a.index == m.index and a.call > 1 and not a.compiled]
    if not steady:
        return None
    compiled = [a.seconds * 1e3 for a, _ in steady]
    eager = [b.seconds * 1e3 for _, b in steady]
    c_ms, e_ms = statistics.median(compiled), statistics.median(eager)
    unreliable = ""
    spread = max(
        (_iqr(times) / median, side, median, _iqr(times))
        for side, times, median in (("compiled", compiled, c_ms), ("eager", eager, e_ms))
        if median > 0
    )
    if len(steady) < MIN_TIMED:
        unreliable = f"only {len(steady)} steady call(s) of it (at least {MIN_TIMED} are needed)"
    elif spread[0] > MAX_SPREAD:
        # The program's own calls are no benchmark: inputs of other sizes, the machine's other
        # work, a call that waited on I/O. A median inside such a spread says little.
        unreliable = (
            f"its {spread[1]} calls' times spread over {spread[3]:.3g} ms (IQR) around a median of "
            f"{spread[2]:.3g} ms: the calls differ or the machine was busy"
        )
    return Timings(
        note=(
            "the program's own compared calls, timed as it made them: the first call and any call "
            "that compiled left out; eager from the same calls in the reference run, made afterwards"
        ),
        eager_ms=round(e_ms, 4),
        compiled_ms=round(c_ms, 4),
        eager_iqr_ms=round(_iqr(eager), 4),
        compiled_iqr_ms=round(_iqr(compiled), 4),
        eager_runs=len(eager),
        compiled_runs=len(compiled),
        speedup=round(e_ms / c_ms, 3) if c_ms > 0 else None,
        unreliable=unreliable,
        threads=torch.get_num_threads(),
    )


def _iqr(values: list[float]) -> float:
    if len(values) < 4:
        return 0.0
    q = statistics.quantiles(values, n=4)
    return q[2] - q[0]
