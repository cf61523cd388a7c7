"""A program against itself run eagerly, the records: each compiled callable's outputs, call by
call, and its calls' times, on both sides, the second in the same program run under
torch.compiler.set_stance("force_eager") in the run's eager reference process (reference.py forks
it, as for a snippet); program_compare.py sets them side by side. Worker-side.

Both processes run the program with the same patch (program_compiles.py), so the callables are
made, named and numbered the same way; each records what its callables returned (detached
copies) and how long each call took, for the first `compare_calls` calls of each callable (the
compared prefix; RECORD_CALLS unless `--compare-calls` says). The reference is started only once
the compiled program has ended, so the two never share the cores while their calls are timed,
and it is told where the compared prefix ends (`write_plan`): it stops at the next call of a compiled
callable after that (a callable first called late is still in the prefix), so a long program is
run eagerly only as far as its compared calls reach. Past its budget a callable's call records
nothing (no copy, no synchronize): it is only counted, to keep the two runs' calls in step.

The calls are matched by their place among the program's calls: when the two runs' sequences
differ (a loop whose length depends on the values), the common prefix is compared and the
report says where they parted.
"""

from __future__ import annotations

import functools
import json
import os
import pickle
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import torch

from playground.worker.capture.records import RunCapture
from playground.worker.run.compare.reference import portable_dumps
from playground.worker.run.programs.made import (
    Bounds,
    Made,
    Unseen,
)
from playground.worker.run.programs.program_compiles import (
    RAISED,
    CompiledCallables,
)
from playground.worker.run.programs.shadow import ShadowWrites
from playground.worker.run.programs.stops import (
    Alarm,
    OsExitPatch,
    ProgramOsExit,
    ProgramStopped,
    PythonsSigint,
    program_seconds,
)
from playground.worker.run.spine import loading

#: Calls compared per callable (its first ones; `--compare-calls N` asks for more), and bytes of
#: outputs per process: past the bytes, calls in the budget are still timed, not compared (the
#: note says how many were); past the budget, a call is only counted.
RECORD_CALLS = 20
RECORD_BYTES = 64 * 2**20

#: Without `--compare-calls`, the compared prefix is also held to about this many seconds of the
#: program's steady steps (each callable's calls at least MIN_COMPARED): the reference runs the
#: program again to the prefix's end, after it, so a program of slow steps paid for 20 of them
#: once more (nanoGPT's bench.py: a 4.2 s reference, 1.22x `python PROG`'s wall time).
COMPARE_BUDGET_S = 0.5
MIN_COMPARED = 3

STANCE = 'torch.compiler.set_stance("force_eager")'

#: The reference's stop once the compared prefix is behind it (a ProgramStopped's `by`).
COMPARED = "compared"


@dataclass
class ProgramCall:
    """One call of a compiled callable, as one process made it (pickled between them)."""

    #: The call's place among the outermost calls the program's main thread made (both runs
    #: number them alike while they make the same calls).
    seq: int
    index: int
    name: str
    #: Which outermost call of its callable it was (1: its first).
    call: int
    seconds: float
    #: Graphs compiled during the call (a call that compiled is no steady-state time).
    compiled: int = 0
    recorded: bool = False
    out: Any = None
    #: When it began (perf_counter): the program's step, call to call.
    started: float = 0.0


@dataclass
class ProgramGrads:
    """The gradients one `backward()` of the program left on each compiled module's parameters."""

    seq: int
    #: The place (ProgramCall.seq) of the last outermost call before it.
    after_call: int
    grads: dict[int, dict[str, Any]] = field(default_factory=dict)


@dataclass
class Recorder:
    """What one process's callables returned and how long they took, for each callable's first
    `budget` outermost calls in the main thread; the later ones only counted."""

    budget: int = RECORD_CALLS
    device: str = "cpu"
    calls: list[Any] = field(default_factory=list)
    bytes: int = 0
    #: Calls in the budget whose output was not recorded (the bytes ran out, or it could not be
    #: copied), per callable index.
    skipped: dict[int, int] = field(default_factory=dict)
    sink: Any = None
    backwards: int = 0
    #: Outermost calls so far (the last one's place), and per callable.
    position: int = 0
    per_callable: dict[int, int] = field(default_factory=dict)
    #: The reference's side: once the call at this place is recorded, `done` is called (the
    #: reference then stops at the next call of a compiled callable). None: never.
    stop_after: int | None = None
    done: Any = None
    #: Why `budget` is what it is, for the notes ("" : `--compare-calls`, or the default count).
    fitted: str = ""

    def __call__(self, m: Made, started: float, graphs: int, out: Any) -> None:
        """After an outermost call of `m` in the main thread that began at `started` (perf_counter)
        and compiled `graphs` graphs; `out` what it returned (RAISED: it raised)."""
        self.position = seq = self.position + 1
        nth = self.per_callable[m.index] = self.per_callable.get(m.index, 0) + 1
        if nth <= self.budget:
            _synchronize(self.device)
            self._record(m, seq, nth, started, graphs, out)
        if self.stop_after is not None and seq >= self.stop_after and self.done is not None:
            self.done(seq)

    def _record(self, m: Made, seq: int, nth: int, began: float, graphs: int, out: Any) -> None:
        seconds = time.perf_counter() - began
        if out is RAISED:
            # It raised: in the sequence, so that the two runs' calls pair up, but no value and
            # no steady time (counted as a call that compiled).
            self._keep(ProgramCall(seq, m.index, m.name, nth, seconds, compiled=1, started=began))
            return
        record = ProgramCall(seq, m.index, m.name, nth, seconds, graphs, started=began)
        if self.bytes < RECORD_BYTES:
            try:
                # A snapshot, taken now: what a call returns may be changed in place later (a
                # Hugging Face cache object grows at every generate() step).
                frozen = portable_dumps(out)
                record.out = pickle.loads(frozen)  # noqa: S301 - our own bytes, just made
                record.recorded = True
                self.bytes += len(frozen)
            except Exception:  # noqa: BLE001 - an output we cannot copy is not compared
                record.out = None
        if not record.recorded:
            self.skipped[m.index] = self.skipped.get(m.index, 0) + 1
        self._keep(record)

    def fit_to_time(self) -> None:
        """The compiled run's side, once the program has ended: each callable's compared calls
        cut to those that fit COMPARE_BUDGET_S of the program's steady steps (its slowest
        callable's median step, call to call, over calls that compiled nothing), at least
        MIN_COMPARED; the later ones are counted as not compared, as past the budget."""
        calls = [c for c in self.calls if isinstance(c, ProgramCall)]
        steps: dict[int, list[float]] = {}
        last: dict[int, ProgramCall] = {}
        for c in sorted(calls, key=lambda c: c.seq):
            before = last.get(c.index)
            if before is not None and not before.compiled and not c.compiled:
                steps.setdefault(c.index, []).append(c.started - before.started)
            last[c.index] = c
        if not steps:
            return
        step = max(sorted(v)[len(v) // 2] for v in steps.values())
        fits = max(MIN_COMPARED, int(COMPARE_BUDGET_S / step) if step > 0 else self.budget)
        if fits >= self.budget:
            return
        self.budget = fits
        self.fitted = f"as many as fit in about {COMPARE_BUDGET_S:g} s of the program's steps"
        end = max((c.seq for c in calls if c.call <= fits), default=0)
        # The reference records as many backward()s as calls of each callable, up to the end.
        grads = [g for g in self.calls if isinstance(g, ProgramGrads) and g.after_call <= end][:fits]
        kept_grads = {id(g) for g in grads}  # by identity: a record's == compares tensors
        self.calls = [r for r in self.calls if (isinstance(r, ProgramCall) and r.call <= fits) or id(r) in kept_grads]
        # Outputs not recorded (the bytes ran out, a copy failed), among the calls kept.
        unrecorded: dict[int, int] = {}
        for c in self.calls:
            if isinstance(c, ProgramCall) and not c.recorded:
                unrecorded[c.index] = unrecorded.get(c.index, 0) + 1
        self.skipped = {i: min(n, unrecorded.get(i, 0)) for i, n in self.skipped.items() if unrecorded.get(i)}

    def last_kept(self) -> int:
        """The place of the last call kept (0: none): where the compared prefix ends."""
        return max((c.seq for c in self.calls if isinstance(c, ProgramCall)), default=0)

    def backward(self, made: CompiledCallables) -> None:
        """After the program's own `tensor.backward()`: each compiled module's parameter grads."""
        self.backwards += 1
        if self.backwards > self.budget:
            return
        record = ProgramGrads(self.backwards, self.position)
        if self.bytes < RECORD_BYTES:
            for m in made.made:
                owner = module_of(m)
                if owner is None:
                    continue
                grads = {n: _copy(p.grad) for n, p in owner.named_parameters() if p.grad is not None}
                if grads:
                    record.grads[m.index] = grads
                    self.bytes += _nbytes(grads)
        self._keep(record)

    def _keep(self, record: Any) -> None:
        if self.sink is not None:
            self.sink.program_call(record)
        else:
            self.calls.append(record)


def _synchronize(device: str) -> None:
    """A call's time includes its GPU work, as torch.utils.benchmark's does."""
    if device.startswith("cuda") and torch.cuda.is_initialized():
        torch.cuda.synchronize()


def module_of(m: Made) -> torch.nn.Module | None:
    """The nn.Module whose parameters a compiled callable trains (None for a plain function)."""
    target = m.original
    if isinstance(target, torch.nn.Module):
        return target
    owner = getattr(target, "__self__", None)
    return owner if isinstance(owner, torch.nn.Module) else None


class BackwardPatch:
    """torch.Tensor.backward for the length of the run, recording the grads after each call
    (backward runs outside the compiled regions, so Dynamo never sees the patch)."""

    def __init__(self, made: CompiledCallables, recorder: Recorder) -> None:
        self.made = made
        self.recorder = recorder
        self.original: Any = None

    def install(self) -> None:
        self.original = original = torch.Tensor.backward
        recorder, made, thread = self.recorder, self.made, threading.get_ident()

        def backward(tensor: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
            result = original(tensor, *args, **kwargs)
            if threading.get_ident() == thread:
                try:
                    recorder.backward(made)
                except Exception:  # noqa: BLE001 - a record must never fail the program
                    pass
            return result

        functools.update_wrapper(backward, original)
        torch.Tensor.backward = backward  # type: ignore[method-assign]

    def uninstall(self) -> None:
        if self.original is not None:
            torch.Tensor.backward = self.original  # type: ignore[method-assign]
            self.original = None


def _copy(t: torch.Tensor) -> torch.Tensor:
    return t.detach().clone()


def _nbytes(value: dict[str, torch.Tensor]) -> int:
    return sum(t.numel() * t.element_size() for t in value.values())


# --- the reference's side ----------------------------------------------------------------------


def our_files() -> tuple[str, ...]:
    """The files of ours a program's run calls into while its callables run (`Unseen`)."""
    from playground.worker.run.programs import program_compiles
    from playground.worker.run.spine import calls

    return (program_compiles.__file__, __file__, calls.__file__)


class EagerOnly:
    """The reference runs eagerly whatever the program does: no frame reaches Dynamo at all.
    Every compiled callable's frame callback is asked of `_callback_from_stance` (torch's
    stance, read at each call), which answers None here whatever the stance, so a program's
    own set_stance("default"), `with set_stance(...)`, torch._dynamo.optimize or config change
    cannot make it compile (a stance of our own could be undone by the program's); and
    compiled autograd (the `compiled_autograd` config a compiled callable enables around its
    calls) traces nothing."""

    def __init__(self) -> None:
        self.saved: list[tuple[Any, str, Any]] = []

    def install(self) -> None:
        import contextlib

        import torch._dynamo.compiled_autograd as compiled_autograd
        import torch._dynamo.eval_frame as eval_frame

        torch.compiler.set_stance("force_eager")
        for owner, name, value in (
            (eval_frame, "_callback_from_stance", _eager_callback),
            (compiled_autograd, "_enable", lambda *a, **k: contextlib.nullcontext()),
        ):
            if hasattr(owner, name):
                self.saved.append((owner, name, getattr(owner, name)))
                setattr(owner, name, value)

    def uninstall(self) -> None:
        while self.saved:
            owner, name, value = self.saved.pop()
            setattr(owner, name, value)


def _eager_callback(callback: Any) -> None:
    """No callback: the frame runs as Python runs it, untraced (torch's "force_eager")."""
    return None


def compare_calls(request: Any) -> int:
    """How many of each callable's first calls the run compares (`--compare-calls`)."""
    asked = getattr(request.run.program, "compare_calls", None)
    return asked if asked else RECORD_CALLS


def write_plan(path: str, stop_after: int, budget: int) -> None:
    """Where the compared prefix ends (the place of its last call) and how many of each
    callable's calls it holds, for the reference to read."""
    with open(path, "w", encoding="utf-8") as fh:
        json.dump({"stop_after": stop_after, "budget": budget}, fh)


def read_plan(path: str | None) -> tuple[int | None, int | None]:
    """The reference's stop and each callable's compared calls (None, None: no plan, so it runs
    the whole program and records the default count)."""
    if path is None:
        return None, None
    try:
        with open(path, encoding="utf-8") as fh:
            plan = json.load(fh)
        stop, budget = plan.get("stop_after"), plan.get("budget")
    except (OSError, ValueError, AttributeError):
        return None, None

    def positive(value: Any) -> int | None:
        return value if isinstance(value, int) and value > 0 else None

    return positive(stop), positive(budget)


def run_reference(request: Any, sink: Any, plan: str | None = None) -> None:
    """In the eager reference process: the program once more under force_eager, its callables'
    calls written to `sink` one by one (a process killed half-way leaves what it made). With a
    plan (`write_plan`), it ends at the first call of a compiled callable after the compared
    prefix: the rest of the program is not run."""
    from playground.worker.run.compare.reference import SideResult

    program = request.run.program
    path = request.run.path
    seconds, _ = program_seconds(program.max_seconds, request.run.flags.timeout_s)
    deadline = time.monotonic() + seconds if seconds else None
    exits = OsExitPatch()
    sigint = PythonsSigint()
    stop_after, budget = read_plan(plan)
    recorder = Recorder(
        budget=budget or compare_calls(request), device=request.run.settings.device, sink=sink, stop_after=stop_after
    )
    made = CompiledCallables(
        RunCapture(snippet_path=path), path, "cpu", {}, Bounds(program.max_calls, deadline), on_return=recorder
    )
    made.untraced = True  # EagerOnly below: no frame reaches Dynamo here
    recorder.done = lambda at: made.keep(ProgramStopped(COMPARED, at))
    patch = BackwardPatch(made, recorder)
    eager = EagerOnly()
    # Its files are shadows (shadow.py): the user's files hold what the compiled run wrote.
    shadows = ShadowWrites(os.path.dirname(os.path.abspath(plan))) if plan else None
    scope = loading.SnippetScope(path, "__main__", not request.warmup)
    text = request.run.text
    note = ""
    try:
        code = compile(text, path, "exec", dont_inherit=True)
        module = scope.open()
        sys.argv = [program.argv0 or path, *program.args]
        made.install()
        patch.install()
        exits.install()
        sigint.install()
        eager.install()
        if shadows is not None:
            shadows.install()
        loading.seed_everything()
        try:
            with Unseen(*our_files()), Alarm(seconds):
                loading.run_code(code, module)
        except (ProgramStopped, ProgramOsExit, SystemExit):
            pass
    except BaseException as exc:  # noqa: BLE001 - the reference's end is data, never raised
        note = f"the eager run of the program raised {type(exc).__name__}"
    finally:
        if shadows is not None:
            shadows.uninstall()
        eager.uninstall()
        sigint.uninstall()
        exits.uninstall()
        patch.uninstall()
        made.uninstall()
    sink.end(SideResult(complete=True, note=note))
