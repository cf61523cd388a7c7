"""The compile and calls phase: torch.compile the target behind a counting backend, then make
every call of inputs() compiled, in order, each with its backward. Worker-side.

Only the compiled calls run here, so they see exactly the state a plain program making only
those calls would see; the eager reference makes the same calls in a process of its own
(reference.py), with the same per-call procedure (`call_side`)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from playground.engine.report import Graph
from playground.engine.settings import Settings
from playground.worker import compat
from playground.worker.capture import anatomy
from playground.worker.capture.records import RunCapture
from playground.worker.run.spine import backward, decomp_table
from playground.worker.run.spine.context import RunContext
from playground.worker.run.spine.failures import RunFailure, failure, first_line
from playground.worker.run.spine.leaves import leaves, plain
from playground.worker.run.spine.loading import Loaded
from playground.worker.run.spine.module_state import StateTracker, same


def synchronize(device: str) -> None:
    """Wait for the device's queued work, so a clock read after it counts that work."""
    if device.startswith("cuda") and torch.cuda.is_available():
        torch.cuda.synchronize()


@dataclass
class SideCall:
    """One call of inputs() as one side made it (compiled here; eager or float64 in the
    reference's process, reference.py): what equivalence compares. Pickled between processes."""

    index: int
    out: Any = None
    #: The arguments after the call: a mutated argument is compared like an output.
    args: tuple[Any, ...] = ()
    mutated: bool = False
    grads: backward.Grads | None = None
    grad_note: str = ""
    #: The followed tensors this call changed (module_state.py).
    state: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class CallRecord:
    """One compiled call: its arguments as inputs() gave them, and what it did."""

    index: int
    #: The arguments before the call (the timing loop starts from the last call's).
    snapshot: tuple[Any, ...]
    side: SideCall


@dataclass(frozen=True)
class CallsDone:
    """The calls phase's result: the records, the cold first call and Inductor's caches then."""

    compiled: Callable[..., Any]
    records: tuple[CallRecord, ...]
    compile_s: float | None
    cache_at_first_call: dict[str, int] = field(default_factory=dict)
    #: The compiled side's state tracker: the state at load, for comparing what either side changed.
    tracker: StateTracker | None = None


def as_call(call: Any, index: int) -> tuple[Any, ...]:
    """One item of inputs() as a tuple of arguments (a bare tensor is a 1-tuple)."""
    if isinstance(call, torch.Tensor):
        call = (call,)
    elif isinstance(call, list):
        call = tuple(call)
    if isinstance(call, tuple):
        for name, leaf in leaves(call, "argument"):
            if isinstance(leaf, torch.Tensor) and leaf.device.type == "meta":
                raise RunFailure(
                    "snippet",
                    "MetaTensor",
                    f"call {index} of inputs() holds a meta tensor ({name}): it has no data to run on; "
                    "make real tensors (torch.randn, torch.zeros, …)",
                )
        return call
    raise RunFailure(
        "snippet",
        "TypeError",
        f"call {index} of inputs() is a {type(call).__name__}, not a tuple of arguments or a tensor",
    )


def clone_args(value: Any, device: str | None = None, float64: bool = False) -> Any:
    """Deep copy of the tensors in a call (leaves keep requires_grad), so that in-place
    mutation in one run cannot leak into the other. `float64`: floating tensors widened to
    float64 (complex to complex128), for the float64 reference."""
    if isinstance(value, torch.Tensor):
        t = value.detach().clone()
        if device is not None:
            t = t.to(device)
        if float64 and t.is_floating_point():
            t = t.to(torch.float64)
        elif float64 and t.is_complex():
            t = t.to(torch.complex128)
        if t.is_leaf and (t.is_floating_point() or t.is_complex()):
            t.requires_grad_(value.requires_grad)
        # Python attributes ride along: torch._dynamo.mark_dynamic() stores its marks there.
        t.__dict__.update(value.__dict__)
        return t
    if isinstance(value, tuple):
        return tuple(clone_args(v, device, float64) for v in value)
    if isinstance(value, list):
        return [clone_args(v, device, float64) for v in value]
    if isinstance(value, dict):
        return {k: clone_args(v, device, float64) for k, v in value.items()}
    return value


def counting_backend(
    settings: Settings,
    capture: RunCapture,
    on_traced: Callable[[int, int], None] | None = None,
    kernels: bool = False,
) -> Callable[..., Any]:
    """The backend asked for, wrapped so that every FX graph it is handed is recorded, and
    `on_traced(graph, ops)` told as soon as Dynamo has traced it, before the backend compiles.
    `kernels`: Inductor compiles with kernel profiling and provenance (kernels_profile.py)."""
    mode = settings.mode if settings.backend == "inductor" else None
    try:
        options = compat.KERNEL_PROFILE_OPTIONS if kernels and settings.backend == "inductor" else None
        real = compat.real_backend(settings.backend, mode, settings.dynamic, options)
    except Exception as exc:  # noqa: BLE001
        raise RunFailure(
            "settings",
            type(exc).__name__,
            f"backend {settings.backend!r} is not available: {first_line(str(exc))}",
        ) from None
    return counting_around(real, capture, settings.device, on_traced)


def counting_around(
    real: Callable[..., Any],
    capture: RunCapture,
    device: str,
    on_traced: Callable[[int, int], None] | None = None,
) -> Callable[..., Any]:
    """`real`, a backend callable, with every FX graph it is handed recorded in `capture` (the
    run's target's backend, and each of a program's own: run/programs/program_compiles.py)."""
    # The config in force for the compiles: read once here (about 7 ms), not inside each
    # graph's compile, where it would count in torch's compile time. The run's settings, the
    # snippet's module-level config changes and the backend's options are all in place by now.
    config = anatomy.config_settings(compat.config_not_default(real))

    def backend(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Any:
        try:
            code = gm.print_readable(print_output=False)
        except Exception:  # noqa: BLE001 - fall back to the plain code
            code = gm.code
        ops = sum(1 for n in gm.graph.nodes if n.op in ("call_function", "call_method", "call_module"))
        cid = compat.current_compile_id()
        index = len(capture.graphs) + 1
        capture.graphs.append(Graph(index=index, compile_id=cid, code=code, op_count=ops))
        # By graph, not by compile id: ids start again at 0/0 after torch._dynamo.reset().
        capture.backend_facts[index] = anatomy.BackendFacts(len(gm.graph.nodes), config)
        if on_traced is not None:
            on_traced(len(capture.graphs), ops)
        decomp_table.settle()  # the code has registered what it registers by now
        # Dynamo would write a lazy GraphModule's code right after this returns; done here, it
        # stays inside torch's compile metrics (the wrapper below would hide the lazy forward).
        compiled = compat.eager_graph_code(real(gm, example_inputs))
        # Which compile of this id it is: the id's compilation_metrics records so far.
        nth = capture.compiles.get(cid or "", 0)
        return first_run_timed(compiled, (cid or "", nth), capture.first_runs, device)

    return backend


def first_run_timed(
    fn: Callable[..., Any], key: tuple[str, int], runs: dict[tuple[str, int], float], device: str
) -> Callable[..., Any]:
    """`fn`, with its first run timed into `runs[key]` (compile id, which compile of it): the
    work torch defers from the compile to the graph's first run is part of the cold first call
    but not of torch's compile metrics. Later runs pay one flag test."""
    pending = True

    def run(*args: Any, **kwargs: Any) -> Any:
        nonlocal pending
        if not pending:
            return fn(*args, **kwargs)
        pending = False
        t0 = time.perf_counter()
        try:
            out = fn(*args, **kwargs)
            synchronize(device)
            return out
        finally:
            runs[key] = runs.get(key, 0.0) + time.perf_counter() - t0

    return run


def place_target(ctx: RunContext, loaded: Loaded) -> None:
    """The target on the run's device, as every side of the run has it."""
    if isinstance(loaded.target, torch.nn.Module) and ctx.settings.device != "cpu":
        loaded.target.to(ctx.settings.device)


def compile_target(
    ctx: RunContext, loaded: Loaded, capture: RunCapture, on_traced: Callable[[int, int], None] | None = None
) -> Callable[..., Any]:
    settings = ctx.settings
    place_target(ctx, loaded)
    return torch.compile(
        loaded.target,
        fullgraph=settings.fullgraph,
        dynamic=settings.dynamic,
        backend=counting_backend(settings, capture, on_traced, ctx.request.run.passes.kernels),
    )


def run_calls(
    ctx: RunContext,
    loaded: Loaded,
    capture: RunCapture,
    on_traced: Callable[[int, int], None] | None = None,
) -> CallsDone:
    """Every call of inputs(), compiled, each with its backward; NoCalls when there is none.
    Nothing else runs between them: the eager reference is another process's (reference.py)."""
    compiled = compile_target(ctx, loaded, capture, on_traced)
    tracker = StateTracker(loaded.module, loaded.target)
    if tracker.note:
        ctx.notes.append(tracker.note)
    records: list[CallRecord] = []
    first: tuple[float | None, dict[str, int]] = (None, {})
    for index, raw in numbered(ctx, loaded):
        snapshot = clone_args(as_call(raw, index), ctx.settings.device)
        ctx.progress("compiling", f"compiling call {index}", index)
        timer = _Timed(ctx.settings.device)

        def forward(*args: Any, index: int = index, timer: _Timed = timer) -> Any:
            capture.call_started(index, loaded.target, args)  # which cache entry serves it
            try:
                with timer:
                    return compiled(*args)
            finally:
                capture.call_finished(loaded.target, args)

        side = call_side(ctx, index, snapshot, forward, loaded, tracker, "compiled")
        if index == 1:
            first = (timer.seconds, compat.cache_counts())
        records.append(CallRecord(index, snapshot, side))
    if not records:
        raise RunFailure("snippet", "NoCalls", "inputs() produced no calls: nothing to run")
    if table := decomp_table.note():
        ctx.notes.append(table)
    return CallsDone(compiled, tuple(records), *first, tracker=tracker)


class _Timed:
    """The forward's seconds (call 1's is the cold compile), synchronized on CUDA."""

    def __init__(self, device: str) -> None:
        self.device = device
        self.seconds: float | None = None

    def __enter__(self) -> None:
        self.t0 = time.perf_counter()

    def __exit__(self, *exc: object) -> None:
        if exc[0] is None:
            synchronize(self.device)
        self.seconds = time.perf_counter() - self.t0


def numbered(ctx: RunContext, loaded: Loaded) -> Any:
    """(1, call), (2, call)...; a generator raising mid-way is the snippet's failure."""
    index = 0
    while True:
        try:
            raw = next(loaded.calls)
        except StopIteration:
            return
        except BaseException as exc:  # noqa: BLE001 - a generator raising mid-way
            raise failure("snippet", exc, ctx.path, f"inputs() raised while producing call {index + 1}") from None
        index += 1
        yield index, raw


#: What each side's failure in a call is, and how the message names the side.
_SIDE_WORDS = {
    "compiled": ("compile", "compiled call {index} raised"),
    "eager": ("snippet", "the target raised in eager mode on call {index}"),
    "float64": ("snippet", "the float64 reference raised on call {index}"),
}


def call_side(
    ctx: RunContext,
    index: int,
    snapshot: tuple[Any, ...],
    fn: Callable[..., Any],
    loaded: Loaded,
    tracker: StateTracker,
    side: str,
    float64: bool = False,
) -> SideCall:
    """One call on one side, the same on every side: a fresh copy of the arguments, the call's
    seed, the forward, its backward (the gradients it gives, with .grad put back as it was, so
    the next call sees what a plain program leaves), the state the call changed."""
    kind, words = _SIDE_WORDS[side]
    args = clone_args(snapshot, float64=float64)
    torch.manual_seed(1234 + index)
    try:
        out = fn(*args)
    except BaseException as exc:  # noqa: BLE001 - on the compiled side, eager ran: a finding about torch.compile
        raise failure(kind, exc, ctx.path, words.format(index=index)) from None
    loss_fn = loaded.module.__dict__.get("loss")
    grads, note = backward.side_grads(ctx, index, out, args, loss_fn, tracker.modules, side)
    mutated = _changed(snapshot, args)
    return SideCall(index, out, args, mutated, grads, note, tracker.changes())


def _changed(before: Any, after: Any) -> bool:
    """Whether a call changed its arguments in place (any layout: sparse ones compare dense)."""
    for (_, b), (_, a) in zip(leaves(before, "input"), leaves(after, "input")):
        if isinstance(b, torch.Tensor) and isinstance(a, torch.Tensor):
            try:
                if b.shape != a.shape or not same(plain(b), plain(a)):
                    return True
            except Exception:  # noqa: BLE001 - a tensor we cannot read: compare it, to be safe
                return True
    return False
