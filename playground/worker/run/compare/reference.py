"""The references a run's compiled calls are judged against, each made in a process of its own.

The contract: the compiled calls see exactly the state a plain program making only those calls
would see. An eager reference that shares the process shares everything the calls touch (a
global read then stored, a module's buffers, an optimizer's weights, the RNG, a class defined
per call), so the template forks two more processes per run, before the run's child has loaded
anything, each of which loads the snippet itself from the same bytes and seeds:

- the eager reference waits until the run's child has loaded the snippet (so what module-level
  code does once, it does in that order; where the run has a findings lane, until the lane has
  sent its findings, or the compiled run asks for the reference first), then makes every call of inputs() with the target
  itself, with the same per-call procedure as the compiled side (calls.call_side), and writes
  what it saw to a file, while the compiled calls run (the diagnostics never wait for it);
- the float64 reference waits, and runs only when the compiled run asks for it (a value that
  differs from eager by more than the tolerance): the snippet's modules and floating inputs in
  float64, the same calls. Most runs never need it, and pay only its fork.

They are forked from the template because a forked child of a process that has started its
OpenMP pool hangs on its first parallel op (../shared/TORCH_NOTES.md): the run's child has.
Without isolation (the template's warm-up, COMPILE_PLAYGROUND_ISOLATION=none) both run in place,
from a fresh load of the snippet, before and after the compiled calls. This module is what a
reference does and the compiled run's handle on it; the template's side, which forks them, is
process/reference_forks.py. Worker-side.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import select
import signal
from dataclasses import dataclass, field, is_dataclass, replace
from typing import Any, BinaryIO

import torch

from playground.engine.report import RunError
from playground.worker.run.compare.value_walk import Unsent
from playground.worker.run.spine import built as built_digests
from playground.worker.run.spine import loading
from playground.worker.run.spine.built import Built
from playground.worker.run.spine.calls import SideCall, as_call, call_side, clone_args, numbered, place_target
from playground.worker.run.spine.context import Emit, RunContext
from playground.worker.run.spine.failures import Cancelled, RunFailure, failure
from playground.worker.run.spine.module_state import StateTracker
from playground.worker.run.spine.request import ReferenceProcesses, WorkerRequest
from playground.worker.run.spine.safe_text import describe_exc

#: The signal that starts the float64 reference (blocked in it until then).
GO = signal.SIGUSR1
#: Written in the references' folder by the run's child before it starts its references (the
#: eager one, or the findings lane, which starts the eager one): the template reads it after a
#: child died to know whether an eager reference is on its way (reference_forks.eager_failure).
STARTED_FILE = "started"


@dataclass
class SideResult:
    """What a reference process saw: its calls by index, and how it ended."""

    calls: dict[int, SideCall] = field(default_factory=dict)
    #: What the process built from the snippet (before widening anything): built.py.
    built: Built | None = None
    #: The call whose forward or backward raised (the compiled calls stop there), else None.
    failed_call: int | None = None
    error: RunError | None = None
    note: str = ""
    #: False when the process ended without writing its end: killed, out of memory, crashed.
    complete: bool = False
    #: A program's reference: each call of its compiled callables (program_reference.py).
    program_calls: list[Any] = field(default_factory=list)


# --- one side's run, in whichever process ------------------------------------------------------


def run_side(request: WorkerRequest, side: str, sink: Sink, suffix: str = "", emit: Emit | None = None) -> None:
    """Load the snippet, make every call as `side` ("eager" or "float64"), record each in `sink`.

    The module takes the compiled run's name (plus `suffix` in place, where that one is loaded
    too): the snippet's own classes in what it returns are then found again when unpickled."""
    ctx = RunContext(request, emit or (lambda event: None), lambda: False)
    name = f"compile_playground_snippet_{request.id}{suffix}"
    scope = loading.SnippetScope(request.run.path, name, not request.warmup)
    float64 = side == "float64"
    built: Built | None = None
    try:
        loaded = loading.prepare(ctx, loading.load(ctx, scope))
        place_target(ctx, loaded)
        if float64:
            # What it built is read before widening: the same values as the other processes'.
            built = StateTracker(loaded.module, loaded.target).built
            _widen(loaded)
        tracker = StateTracker(loaded.module, loaded.target)
        built = built if float64 else tracker.built
        for index, raw in numbered(ctx, loaded):
            ctx.progress("reference", f"{side} call {index}", index)
            snapshot = clone_args(as_call(raw, index), request.run.settings.device)
            if built is not None:
                built.inputs[index] = built_digests.of_inputs(snapshot)
            try:
                sink.call(call_side(ctx, index, snapshot, loaded.target, loaded, tracker, side, float64=float64))
            except RunFailure as exc:
                sink.end(SideResult(failed_call=index, error=exc.error, complete=True, built=built))
                return
        sink.end(SideResult(complete=True, built=built))
    except RunFailure as exc:
        sink.end(SideResult(error=exc.error, complete=True, built=built))
    except Exception as exc:  # noqa: BLE001 - the reference's failure is reported, never raised
        error = failure("snippet", exc, request.run.path, f"the {side} reference raised").error
        sink.end(SideResult(error=error, complete=True, built=built))
    finally:
        scope.close()


def _widen(loaded: loading.Loaded) -> None:
    """The snippet's modules and module-level floating tensors in float64 (complex128)."""
    namespace = loaded.module.__dict__
    modules = [v for v in namespace.values() if isinstance(v, torch.nn.Module)]
    if isinstance(loaded.target, torch.nn.Module):
        modules.append(loaded.target)
    for module in modules:
        module.to(torch.float64)  # complex parameters stay complex: .to(dtype) widens floats only
    for name, value in list(namespace.items()):
        if type(value) is torch.Tensor and (value.is_floating_point() or value.is_complex()):
            namespace[name] = clone_args(value, float64=True)


class Sink:
    """Where one side's calls go: a file (a reference process) or a list (in place)."""

    def call(self, record: SideCall) -> None:
        raise NotImplementedError

    def program_call(self, record: Any) -> None:
        raise NotImplementedError

    def end(self, result: SideResult) -> None:
        raise NotImplementedError


class FileSink(Sink):
    """One pickle per call, then the end: a process killed half-way leaves the calls it made.
    The end is also written as JSON beside it (`.end.json`): how the reference ended, which the
    template reads without unpickling anything of the snippet's (see ended_badly)."""

    def __init__(self, fh: BinaryIO, path: str) -> None:
        self.fh = fh
        self.path = path

    def call(self, record: SideCall) -> None:
        self.fh.write(portable_dumps(record))

    def program_call(self, record: Any) -> None:
        self.fh.write(portable_dumps(record))

    def end(self, result: SideResult) -> None:
        self.fh.write(portable_dumps(result))
        self.fh.flush()
        error = None if result.error is None else result.error.to_dict()
        with open(self.path + ".end.json", "w", encoding="utf-8") as fh:
            json.dump({"failed_call": result.failed_call, "error": error}, fh)


class ListSink(Sink):
    def __init__(self) -> None:
        self.result = SideResult()

    def call(self, record: SideCall) -> None:
        self.result.calls[record.index] = record

    def program_call(self, record: Any) -> None:
        self.result.program_calls.append(record)

    def end(self, result: SideResult) -> None:
        result.calls = self.result.calls
        result.program_calls = self.result.program_calls
        self.result = result


def read_side(path: str) -> SideResult:
    """A reference's file: its calls and its end (complete=False when it never wrote one)."""
    result = SideResult()
    try:
        with open(path, "rb") as fh:
            while True:
                try:
                    item = pickle.load(fh)
                except EOFError:
                    break
                if isinstance(item, SideCall):
                    result.calls[item.index] = item
                elif isinstance(item, SideResult):
                    item.calls = result.calls
                    item.program_calls = result.program_calls
                    result = item
                elif type(item).__name__ in ("ProgramCall", "ProgramGrads"):  # by name: their module imports this one
                    result.program_calls.append(item)
    except (OSError, pickle.UnpicklingError, AttributeError, ImportError, EOFError, ValueError) as exc:
        result.note = f"the reference's results could not be read back: {describe_exc(exc)}"
    return result


# --- pickling what the user's calls returned ---------------------------------------------------


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        # A tensor in autograd's graph: its values are what is compared.
        if issubclass(type(obj), torch.Tensor) and (obj.requires_grad or obj.grad_fn is not None):
            return (_same, (obj.detach(),))
        return NotImplemented


def _same(value: Any) -> Any:
    return value


def _dumps(value: Any) -> bytes:
    import io

    buffer = io.BytesIO()
    _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(value)
    return buffer.getvalue()


def portable_dumps(record: Any) -> bytes:
    """`record` pickled; a value that cannot be (a generator, a lambda, a class made per call)
    is replaced by an Unsent marker that equivalence reports as not compared."""
    try:
        return _dumps(record)
    except Exception:  # noqa: BLE001 - the user's objects: anything may refuse pickling
        pass
    if isinstance(record, SideCall):
        record = SideCall(
            record.index,
            _portable(record.out),
            _portable(record.args),
            record.mutated,
            record.grads,
            record.grad_note,
            record.state,
        )
    elif is_dataclass(record) and hasattr(record, "out"):  # a program's call (program_reference.py)
        record = replace(record, out=_portable(record.out))
    return _dumps(record)


def _portable(value: Any, depth: int = 0) -> Any:
    if depth < 32 and type(value) in (tuple, list):
        return type(value)(_portable(v, depth + 1) for v in value)
    if depth < 32 and type(value) is dict:
        return {k: _portable(v, depth + 1) for k, v in value.items()}
    try:
        _dumps(value)
        return value
    except Exception as exc:  # noqa: BLE001
        return Unsent(type(value).__name__, describe_exc(exc))


# --- the references, from the compiled run's side ----------------------------------------------


#: A reference process the template did not fork (a run across ranks has no float64 one): never
#: a pid to signal (os.kill(0, ...) would signal our whole process group).
NO_PROCESS = -1


def first_to_start(info: ReferenceProcesses) -> int:
    """The reference process the run's GO is for: with a findings lane, the lane goes first and
    starts the eager reference when its findings are sent (process/findings_lane.py): the
    findings come before the comparison, and two cores do not hold three traces at once.
    References.eager() starts the eager one itself if the run needs it before then."""
    return info.eager if info.findings == NO_PROCESS else info.findings


def send_go(pid: int) -> None:
    """GO to a reference process. Never to a pid that is no process: os.kill(-1) signals every
    process we may signal, os.kill(0) our own group (a fork that failed reads -1,
    ReferenceProcesses.resolved)."""
    if pid > 0:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, GO)


class References:
    """The compiled run's handle on its references: forked processes when the template made
    them, else runs in place."""

    def __init__(self, ctx: RunContext) -> None:
        self.ctx = ctx
        # Their pids, when the template forks them just after handing this run its request,
        # are read when first needed (after the load: the forks are done long before).
        self._info = ctx.request.references
        self.in_place_eager: SideResult | None = None
        self.eager_result: SideResult | None = None
        self.started = False

    @property
    def info(self) -> ReferenceProcesses | None:
        if self._info is not None and self._info.pending:
            self._info = self._info.resolved()
        return self._info

    def start(self) -> None:
        """The run has loaded the snippet: the eager reference may load it now (in place, it
        runs now, whole). Once: a later call does nothing."""
        if self.started:
            return
        self.started = True
        if self._info is None:
            sink = ListSink()
            run_side(self.ctx.request, "eager", sink, suffix="_eager")
            self.in_place_eager = sink.result
            return
        with contextlib.suppress(OSError), open(os.path.join(self._info.folder, STARTED_FILE), "w"):
            pass
        # The template forks the references after handing this run its request, and a small
        # snippet loads before its forks are done (a toy's calls waited 5-35 ms here for their
        # pids). The calls never wait for them: if their pids are not written yet, the template
        # sends GO itself once it has written them, as it reads the mark above then
        # (process/reference_forks.py). Each of the two writes its file before it reads the
        # other's, so at least one of them sends it; a second GO is blocked, never delivered.
        now = self._info.resolved_now()
        if now is not None:
            self._info = now
            send_go(first_to_start(now))

    def eager(self) -> SideResult:
        """The eager reference's result, waited for (once; later calls return the same)."""
        if self.info is None:
            return self.in_place_eager or SideResult(note="the eager reference never started")
        self.start()
        if self.eager_result is None:
            if self.info.findings != NO_PROCESS:  # the lane may not have started it yet
                send_go(self.info.eager)
            self.ctx.progress("reference", "waiting for the eager reference")
            self.eager_result = self._wait(self.info.eager, os.path.join(self.info.folder, "eager"), "eager")
        return self.eager_result

    def float64(self) -> SideResult:
        self.ctx.progress("reference", "running the float64 reference")
        if self.info is None:
            sink = ListSink()
            run_side(self.ctx.request, "float64", sink, suffix="_f64")
            return sink.result
        pid = self.info.float64
        if pid == NO_PROCESS:
            return SideResult(complete=True, note="a run across ranks has no float64 reference")
        send_go(pid)
        return self._wait(pid, os.path.join(self.info.folder, "float64"), "float64")

    def _wait(self, pid: int, path: str, side: str) -> SideResult:
        try:
            pidfd = os.pidfd_open(pid)
        except (ProcessLookupError, OSError):
            pidfd = None
        try:
            while pidfd is not None and not select.select([pidfd], [], [], 0.25)[0]:
                if self.ctx.cancelled():
                    raise Cancelled()
        finally:
            if pidfd is not None:
                os.close(pidfd)
        if os.path.exists(path):
            return read_side(path)
        # Killed before its end (out of memory, a crash, a signal): what it wrote stays readable.
        partial = read_side(path + ".part") if os.path.exists(path + ".part") else SideResult()
        partial.complete = False
        partial.note = partial.note or _why_it_ended(path, side)
        return partial


def _why_it_ended(path: str, side: str) -> str:
    """The words for a reference process that ended without its result: the exception of ours
    it said before it left (reference_forks.py writes it beside its result), or a kill."""
    try:
        with open(path + ".failed", encoding="utf-8", errors="replace") as fh:
            said = fh.read(500).strip()
    except OSError:
        said = ""
    if said:
        return f"the {side} reference process failed in the playground's own code ({said})"
    return f"the {side} reference process ended before it finished (killed or crashed)"
