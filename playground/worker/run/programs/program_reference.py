"""A program against itself run eagerly: each compiled callable's outputs, call by call, and its
calls' times, against the same program run under torch.compiler.set_stance("force_eager") in the
run's eager reference process (reference.py forks it, as for a snippet). Worker-side.

Both processes run the program with the same patch (program_compiles.py), so the callables are
made, named and numbered the same way; each records what its callables returned (detached
copies, up to a budget) and how long each call took. The reference is started only once the
compiled program has ended, so the two never share the cores while their calls are timed.

The calls are matched by their order in the program: when the two runs' sequences of calls
differ (a loop whose length depends on the values), the common prefix is compared and the
report says where they parted. There is no float64 run of a whole program, so a value outside
the tolerance is "differs", never "within rounding".
"""

from __future__ import annotations

import functools
import pickle
import statistics
import sys
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any

import torch

from playground.engine.program import callable_key
from playground.engine.report import Comparison, CompiledCallable, Equivalence, Timings
from playground.engine.report.equivalence import VERDICTS
from playground.engine.wording.line import plural
from playground.worker.capture.records import RunCapture
from playground.worker.run.compare.equivalence import verdict_of
from playground.worker.run.compare.reference import portable_dumps
from playground.worker.run.compare.value_walk import compare_values
from playground.worker.run.programs.made import (
    Bounds,
    Made,
    Unseen,
)
from playground.worker.run.programs.program_compiles import (
    RAISED,
    CompiledCallables,
)
from playground.worker.run.programs.stops import (
    Alarm,
    OsExitPatch,
    ProgramOsExit,
    ProgramStopped,
    program_seconds,
)
from playground.worker.run.spine import loading

#: Calls recorded per callable, and bytes of outputs per process: past either, calls are still
#: counted and timed, not compared (the note says how many were).
RECORD_CALLS = 100
RECORD_BYTES = 64 * 2**20
#: Calls kept at all (their times and order): a tight loop makes millions in its bound.
MAX_CALLS_KEPT = 100_000

#: Fewer steady calls than this on a side: its median is shown, the speedup marked unreliable.
MIN_TIMED = 5
#: A side whose calls' IQR is more than this share of their median: the speedup is unreliable.
MAX_SPREAD = 0.5

STANCE = 'torch.compiler.set_stance("force_eager")'


@dataclass
class ProgramCall:
    """One call of a compiled callable, as one process made it (pickled between them)."""

    seq: int
    index: int
    name: str
    call: int
    seconds: float
    #: Graphs compiled during the call (a call that compiled is no steady-state time).
    compiled: int = 0
    recorded: bool = False
    out: Any = None


@dataclass
class ProgramGrads:
    """The gradients one `backward()` of the program left on each compiled module's parameters."""

    seq: int
    #: The program-wide number of the last call of a compiled callable before it.
    after_call: int
    grads: dict[int, dict[str, Any]] = field(default_factory=dict)


@dataclass
class Recorder:
    """What one process's callables returned and how long they took, call by call."""

    calls: list[ProgramCall] = field(default_factory=list)
    bytes: int = 0
    #: Calls left unrecorded by the budget, per callable index.
    skipped: dict[int, int] = field(default_factory=dict)
    sink: Any = None
    backwards: int = 0

    def __call__(self, m: Made, seq: int, seconds: float, compiled: int, out: Any) -> None:
        if seq > MAX_CALLS_KEPT:
            return
        if out is RAISED:
            # It raised: in the sequence, so that the two runs' calls pair up, but no value and
            # no steady time (counted as a call that compiled).
            self._keep(ProgramCall(seq, m.index, m.name, m.calls, seconds, compiled=1))
            return
        record = ProgramCall(seq, m.index, m.name, m.calls, seconds, compiled)
        if m.calls <= RECORD_CALLS and self.bytes < RECORD_BYTES:
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

    def backward(self, made: CompiledCallables) -> None:
        """After the program's own `tensor.backward()`: each compiled module's parameter grads."""
        self.backwards += 1
        if self.backwards > RECORD_CALLS:
            return
        record = ProgramGrads(self.backwards, made.calls)
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


def run_reference(request: Any, sink: Any) -> None:
    """In the eager reference process: the program once more under force_eager, its callables'
    calls written to `sink` one by one (a process killed half-way leaves what it made)."""
    from playground.worker.run.compare.reference import SideResult

    program = request.run.program
    path = request.run.path
    seconds, _ = program_seconds(program.max_seconds, request.run.flags.timeout_s)
    deadline = time.monotonic() + seconds if seconds else None
    exits = OsExitPatch()
    recorder = Recorder(sink=sink)
    made = CompiledCallables(
        RunCapture(snippet_path=path), path, "cpu", {}, Bounds(program.max_calls, deadline), on_return=recorder
    )
    patch = BackwardPatch(made, recorder)
    eager = EagerOnly()
    scope = loading.SnippetScope(path, "__main__", not request.warmup)
    text = request.run.text
    note = ""
    try:
        code = compile(text, path, "exec", dont_inherit=True)
        module = scope.open()
        sys.argv = [path, *program.args]
        made.install()
        patch.install()
        exits.install()
        eager.install()
        loading.seed_everything()
        try:
            with Unseen(*our_files()), Alarm(seconds):
                loading.run_code(code, module)
        except (ProgramStopped, ProgramOsExit, SystemExit):
            pass
    except BaseException as exc:  # noqa: BLE001 - the reference's end is data, never raised
        note = f"the eager run of the program raised {type(exc).__name__}"
    finally:
        eager.uninstall()
        exits.uninstall()
        patch.uninstall()
        made.uninstall()
    sink.end(SideResult(complete=True, note=note))


# --- the compiled run's side -------------------------------------------------------------------


@dataclass
class Compared:
    """Each section's equivalence and timings, and the totals' equivalence."""

    equivalence: dict[int, Equivalence]
    timings: dict[int, Timings]
    total: Equivalence | None
    notes: list[str]


def compare(made: list[Made], mine: Recorder, eager_records: list[Any], eager_note: str) -> Compared:
    """The compiled run's calls (and the grads of its backward() calls) against the
    reference's, over the common prefix of the two runs' calls."""
    names = [m.name for m in made]
    key = {m.index: callable_key(m.name, m.index, names) for m in made}
    notes: list[str] = []
    ours = sorted((c for c in mine.calls if isinstance(c, ProgramCall)), key=lambda c: c.seq)
    theirs = sorted((c for c in eager_records if type(c).__name__ == "ProgramCall"), key=lambda c: c.seq)
    common = _common_prefix(ours, theirs, eager_note, notes)
    if common == MAX_CALLS_KEPT:
        notes.append(f"the calls after the first {MAX_CALLS_KEPT} were neither compared nor timed")
    outputs: dict[int, list[Comparison]] = {}
    for a, b in zip(ours[:common], theirs[:common], strict=True):
        if a.recorded and b.recorded:
            entries = compare_values(b.out, a.out, a.call, None)
            outputs.setdefault(a.index, []).extend(replace(e, verdict=e.verdict or verdict_of(e)) for e in entries)
    grads = _grads(
        [g for g in mine.calls if isinstance(g, ProgramGrads)],
        [g for g in eager_records if type(g).__name__ == "ProgramGrads"],
        common,
    )
    equivalence: dict[int, Equivalence] = {}
    all_out: list[Comparison] = []
    all_grads: list[Comparison] = []
    for m in made:
        out, grad = outputs.get(m.index, []), grads.get(m.index, [])
        if not out and not grad:
            continue
        calls = len({e.call for e in out})
        note = f"{plural(calls, 'call')} compared"
        if grad:
            note += f", grads of {plural(len({e.call for e in grad}), 'backward()', 'backward()s')}"
        skipped = mine.skipped.get(m.index, 0)
        if skipped:
            note += f"; {skipped} later call(s) not recorded (at most {RECORD_CALLS} per callable, 64 MiB in all)"
        equivalence[m.index] = _equivalence(out, grad, note)
        all_out += [replace(e, name=f"{key[m.index]}: {e.name}") for e in out]
        all_grads += [replace(e, name=f"{key[m.index]}: {e.name}") for e in grad]
    total = _equivalence(all_out, all_grads, "; ".join(notes)) if all_out or all_grads else None
    timings = {m.index: t for m in made if (t := _timings(m, ours[:common], theirs[:common])) is not None}
    return Compared(equivalence, timings, total, notes)


def _common_prefix(ours: list[ProgramCall], theirs: list[ProgramCall], eager_note: str, notes: list[str]) -> int:
    """How many calls the two runs made alike (the same callable, in the same order)."""
    common = 0
    for a, b in zip(ours, theirs, strict=False):
        if (a.index, a.name) != (b.index, b.name):
            notes.append(
                f"the compiled and the eager run parted at call {a.seq}: compiled called {a.name} "
                f"(its call {a.call}), eager called {b.name} (its call {b.call}); calls 1-{common} compared"
            )
            return common
        common += 1
    if len(ours) != len(theirs):
        longer, shorter = ("compiled", "eager") if len(ours) > len(theirs) else ("eager", "compiled")
        why = f" ({eager_note})" if eager_note else ""
        notes.append(
            f"the {longer} run made {max(len(ours), len(theirs))} calls, the {shorter} "
            f"{min(len(ours), len(theirs))}{why}: the first {common} compared"
        )
    return common


def _grads(ours: list[ProgramGrads], theirs: list[ProgramGrads], common: int) -> dict[int, list[Comparison]]:
    """Each backward() of the common prefix, per compiled module: its parameters' grads."""
    found: dict[int, list[Comparison]] = {}
    for a, b in zip(ours, theirs, strict=False):
        if a.after_call != b.after_call or a.after_call > common:
            break
        for index, mine in a.grads.items():
            ref = b.grads.get(index)
            if ref is None:
                continue
            entries = compare_values(ref, mine, a.seq, None, root="grad")
            found.setdefault(index, []).extend(replace(e, verdict=e.verdict or verdict_of(e)) for e in entries)
    return found


def _equivalence(entries: list[Comparison], grads: list[Comparison], note: str) -> Equivalence:
    compared = [e for e in (*entries, *grads) if e.compared]
    worst = max((VERDICTS.index(e.verdict) for e in compared if e.verdict in VERDICTS), default=None)
    return Equivalence(
        ok=bool(compared) and all(e.ok for e in compared),
        outputs=tuple(entries),
        grads=tuple(grads),
        note=note,
        verdict=VERDICTS[worst] if worst is not None else "",
        reference=f"the same program under {STANCE}, in a process of its own",
        rule="each leaf within the tolerance of its dtype; a program has no float64 reference, "
        "so a value outside it differs",
    )


def _timings(m: Made, ours: list[ProgramCall], theirs: list[ProgramCall]) -> Timings | None:
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
            "the program's own calls, timed as it made them: the first call and any call that "
            "compiled left out; eager from the same calls in the reference run, made afterwards"
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


def with_comparison(section: CompiledCallable, compared: Compared) -> CompiledCallable:
    return replace(
        section,
        equivalence=compared.equivalence.get(section.index),
        timings=compared.timings.get(section.index),
    )
