"""torch.utils.benchmark's figure for a program's compiled callable, beside the speedup of the
program's own calls (program_timings.py): the arguments of its last steady call (the newest
outermost call of the main thread that compiled nothing), timed again once the program has
ended, compiled and eagerly, by torch's own benchmark. Worker-side.

The program's own calls are no benchmark: inputs of other sizes, a call that waited on I/O, and
eager times taken from the reference run, a different process at a different moment. Torch's
Timer on the same arguments, both sides one after the other in this process, is the figure a
user would measure; where the two differ by more than `AGREE` the speedup is marked unreliable
with both figures. Compiled, the callable runs under the stance `fail_on_recompile` (a call that
would compile again is not timed: its guards no longer hold once the program has ended); eagerly,
what the program handed torch.compile, under the stance `force_eager` (a compiled callable it
calls runs eagerly too). The program's output is
silenced meanwhile (a print in the callable would add to what it printed). Not done across ranks
(a collective in the callable would wait for ranks that time other counts) nor under
`--no-timing`.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import torch

from playground.engine.report import Timings
from playground.engine.report.timings import TorchBenchmark
from playground.worker.run.programs.made import Made

#: Each side's time for torch's Timer (blocked_autorange's min_run_time), and the most the
#: benchmarks of one program may take in all: the figure is a check on the program's own.
MIN_RUN_S = 0.1
#: Each side's time in this many turns, alternating (MIN_RUN_S in all per side).
ROUNDS = 4
BUDGET_S = 2.0
#: A steady call longer than this is not timed again: each side makes at least one call a turn
#: (ROUNDS turns), so a longer one would overrun BUDGET_S (nanoGPT's 160 ms step: 4.7 s).
MAX_CALL_S = 0.1
#: The program's speedup and torch's differ by more than this factor: the program's is unreliable.
AGREE = 1.5


@dataclass
class SteadyCall:
    """The newest steady call of a compiled callable: what was called, with what, grad mode."""

    fn: Any
    args: tuple[Any, ...]
    kwargs: dict[str, Any]
    grad: bool
    seconds: float


def keep(made: Made, fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any], seconds: float) -> None:
    """After a steady call of `made` (the compiled `fn`, not our counting wrapper): its arguments
    by reference, replacing the one before (a reference, not a copy: one call's inputs live on).
    Its time is the quickest steady call's so far: one call that waited on a busy machine does
    not make the callable too long to time again."""
    before: SteadyCall | None = made.steady
    quickest = seconds if before is None else min(before.seconds, seconds)
    made.steady = SteadyCall(fn, args, kwargs, torch.is_grad_enabled(), quickest)


@contextlib.contextmanager
def _silenced() -> Iterator[None]:
    """The process's stdout and stderr to /dev/null (the program's output file is theirs)."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        yield
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, devnull):
            os.close(fd)


def _eager_of(m: Made) -> Any:
    """The callable as the program wrote it: what it handed torch.compile (a module compiled in
    place runs its own `_call_impl`, not the compiled one its `__call__` now takes). Not the
    compiled callable under `force_eager`: that stance's path costs about 1 ms a call (measured
    on 2.13: 1.03 ms for a function that runs in 0.08 ms)."""
    original = m.original
    if isinstance(original, torch.nn.Module) and m.kind == "module.compile":
        return original._call_impl
    return original


def _timed(fn: Any, call: SteadyCall, stance: str) -> Any:
    from torch.utils.benchmark import Timer

    timer = Timer(
        stmt="fn(*args, **kwargs)",
        globals={"fn": fn, "args": call.args, "kwargs": call.kwargs},
        num_threads=torch.get_num_threads(),
    )
    with torch.compiler.set_stance(stance), torch.set_grad_enabled(call.grad):
        return timer.blocked_autorange(min_run_time=MIN_RUN_S / ROUNDS)


def measure(made: list[Made]) -> dict[int, TorchBenchmark]:
    """Each callable's figure, by its index; a callable not timed has a note instead."""
    found: dict[int, TorchBenchmark] = {}
    deadline = time.monotonic() + BUDGET_S
    for m in made:
        call: SteadyCall | None = getattr(m, "steady", None)
        eager_fn = _eager_of(m)
        if call is None or eager_fn is None:
            continue
        if call.seconds > MAX_CALL_S:
            found[m.index] = TorchBenchmark(note=f"not timed again: one call took {call.seconds:.2g} s")
            continue
        if time.monotonic() > deadline:
            found[m.index] = TorchBenchmark(note=f"not timed again: the program's benchmarks took {BUDGET_S:g} s")
            continue
        try:
            compiled_times: list[float] = []
            eager_times: list[float] = []
            with _silenced():
                # The sides in turns, a few short measurements each: a burst of the machine's
                # other work lands on both (one 0.1 s block per side once read 40x for backend
                # eager on a loaded machine).
                for _ in range(ROUNDS):
                    compiled_times += _timed(call.fn, call, "fail_on_recompile").times
                    # force_eager: a compiled callable it calls runs eagerly too, as in the reference.
                    eager_times += _timed(eager_fn, call, "force_eager").times
        except Exception as exc:  # noqa: BLE001 - a figure we cannot take is said, never guessed
            found[m.index] = TorchBenchmark(note=f"not timed again: {type(exc).__name__}: {_first_line(exc)}")
            continue
        c_s, e_s = statistics.median(compiled_times), statistics.median(eager_times)
        found[m.index] = TorchBenchmark(
            eager_ms=round(e_s * 1e3, 4),
            compiled_ms=round(c_s * 1e3, 4),
            speedup=round(e_s / c_s, 3) if c_s > 0 else None,
            runs=len(compiled_times) + len(eager_times),
        )
        m.steady = None  # its arguments may go now
    return found


def beside(timings: Timings, bench: TorchBenchmark | None) -> Timings:
    """The program's timings with torch's figure beside them, marked unreliable where the two
    speedups differ by more than AGREE."""
    if bench is None:
        return timings
    ours, theirs = timings.speedup, bench.speedup
    unreliable = timings.unreliable
    if not unreliable and ours and theirs and max(ours, theirs) / min(ours, theirs) > AGREE:
        unreliable = (
            f"the program's own calls give {ours:.2f}x, torch.utils.benchmark on its last steady call's "
            f"arguments {theirs:.2f}x: the calls differ, or the machine was busy"
        )
    return replace(timings, benchmark=bench, unreliable=unreliable)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else ""
