"""The compile and calls phase: torch.compile the target behind a counting backend, then run
every call of inputs() eager and compiled, in order. Worker-side."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from playground.engine.settings import Settings
from playground.worker import compat, equivalence, gradients, timing
from playground.worker.capture import RunCapture
from playground.worker.context import RunContext
from playground.worker.failures import RunFailure, failure, first_line
from playground.worker.loading import Loaded


@dataclass(frozen=True)
class CallRecord:
    """One call, both ways: what equivalence and timing compare."""

    index: int
    eager_grads: gradients.Grads | None
    #: The arguments as inputs() gave them, before either run could mutate them.
    snapshot: tuple[Any, ...]
    eager_args: tuple[Any, ...]
    compiled_args: tuple[Any, ...]
    eager_out: Any
    compiled_out: Any


@dataclass(frozen=True)
class CallsDone:
    """The calls phase's result: the records, the cold first call and Inductor's caches then."""

    compiled: Callable[..., Any]
    records: tuple[CallRecord, ...]
    compile_s: float | None
    cache_at_first_call: dict[str, int] = field(default_factory=dict)


def as_call(call: Any, index: int) -> tuple[Any, ...]:
    """One item of inputs() as a tuple of arguments (a bare tensor is a 1-tuple)."""
    if isinstance(call, torch.Tensor):
        call = (call,)
    elif isinstance(call, list):
        call = tuple(call)
    if isinstance(call, tuple):
        for name, leaf in equivalence.leaves(call, "argument"):
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


def clone_args(value: Any, device: str | None = None) -> Any:
    """Deep copy of the tensors in a call (leaves keep requires_grad), so that in-place
    mutation in one run cannot leak into the other."""
    if isinstance(value, torch.Tensor):
        t = value.detach().clone()
        if device is not None:
            t = t.to(device)
        if t.is_leaf and (t.is_floating_point() or t.is_complex()):
            t.requires_grad_(value.requires_grad)
        # Python attributes ride along: torch._dynamo.mark_dynamic() stores its marks there.
        t.__dict__.update(value.__dict__)
        return t
    if isinstance(value, tuple):
        return tuple(clone_args(v, device) for v in value)
    if isinstance(value, list):
        return [clone_args(v, device) for v in value]
    if isinstance(value, dict):
        return {k: clone_args(v, device) for k, v in value.items()}
    return value


def counting_backend(settings: Settings, capture: RunCapture) -> Callable[..., Any]:
    """The backend asked for, wrapped so that every FX graph it is handed is recorded."""
    mode = settings.mode if settings.backend == "inductor" else None
    try:
        real = compat.real_backend(settings.backend, mode, settings.dynamic)
    except Exception as exc:  # noqa: BLE001
        raise RunFailure(
            "settings",
            type(exc).__name__,
            f"backend {settings.backend!r} is not available: {first_line(str(exc))}",
        ) from None

    def backend(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Any:
        try:
            code = gm.print_readable(print_output=False)
        except Exception:  # noqa: BLE001 - fall back to the plain code
            code = gm.code
        ops = sum(1 for n in gm.graph.nodes if n.op in ("call_function", "call_method", "call_module"))
        cid = compat.current_compile_id()
        capture.graphs.append({"index": len(capture.graphs) + 1, "compile_id": cid, "code": code, "op_count": ops})
        # Dynamo would write a lazy GraphModule's code right after this returns; done here, it
        # stays inside torch's compile metrics (the wrapper below would hide the lazy forward).
        compiled = compat.eager_graph_code(real(gm, example_inputs))
        return first_run_timed(compiled, cid, capture.first_runs, settings.device)

    return backend


def first_run_timed(
    fn: Callable[..., Any], compile_id: str | None, runs: dict[str, float], device: str
) -> Callable[..., Any]:
    """`fn`, with its first run timed into `runs[compile_id]` (issue 12): the work torch defers
    from the compile to the graph's first run is part of the cold first call but not of torch's
    compile metrics. Later runs pay one flag test."""
    pending = True

    def run(*args: Any, **kwargs: Any) -> Any:
        nonlocal pending
        if not pending:
            return fn(*args, **kwargs)
        pending = False
        t0 = time.perf_counter()
        try:
            out = fn(*args, **kwargs)
            timing.synchronize(device)
            return out
        finally:
            key = compile_id or ""
            runs[key] = runs.get(key, 0.0) + time.perf_counter() - t0

    return run


def compile_target(ctx: RunContext, loaded: Loaded, capture: RunCapture) -> Callable[..., Any]:
    settings = ctx.settings
    if isinstance(loaded.target, torch.nn.Module) and settings.device != "cpu":
        loaded.target.to(settings.device)
    return torch.compile(
        loaded.target,
        fullgraph=settings.fullgraph,
        dynamic=settings.dynamic,
        backend=counting_backend(settings, capture),
    )


def run_calls(ctx: RunContext, loaded: Loaded, capture: RunCapture) -> CallsDone:
    """Every call of inputs(), eager then compiled; NoCalls when there is none."""
    compiled = compile_target(ctx, loaded, capture)
    records: list[CallRecord] = []
    first: tuple[float | None, dict[str, int]] = (None, {})
    for index, raw in _numbered(ctx, loaded):
        record, elapsed = _one_call(ctx, index, raw, loaded, compiled, capture)
        if index == 1:
            first = (elapsed, compat.cache_counts())
        records.append(record)
    if not records:
        raise RunFailure("snippet", "NoCalls", "inputs() produced no calls: nothing to run")
    return CallsDone(compiled, tuple(records), *first)


def _numbered(ctx: RunContext, loaded: Loaded) -> Any:
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


def _one_call(
    ctx: RunContext, index: int, raw: Any, loaded: Loaded, compiled: Callable[..., Any], capture: RunCapture
) -> tuple[CallRecord, float]:
    """One call eager (with its backward), then compiled; the record and the compiled call's
    seconds (call 1's is the cold compile)."""
    device = ctx.settings.device
    args = as_call(raw, index)
    snapshot, a_eager, a_compiled = (clone_args(args, device) for _ in range(3))
    seed = 1234 + index
    ctx.progress("compiling", f"eager call {index}", index)
    torch.manual_seed(seed)
    try:
        out_eager = loaded.target(*a_eager)
    except BaseException as exc:  # noqa: BLE001
        raise failure("snippet", exc, ctx.path, f"the target raised in eager mode on call {index}") from None
    # Eager's backward runs now, before the compiled forward: a module that updates buffers
    # in place (BatchNorm's running stats) would otherwise invalidate what eager's graph
    # saved, and blame the snippet for our ordering.
    loss_fn = loaded.module.__dict__.get("loss")
    grads = gradients.eager_grads(ctx, index, out_eager, a_eager, loss_fn, loaded.params_owner)
    ctx.progress("compiling", f"compiling call {index}", index)
    torch.manual_seed(seed)
    capture.call_started(index, loaded.target, a_compiled)  # issue 11: which entry serves it
    t0 = time.perf_counter()
    try:
        out_compiled = compiled(*a_compiled)
        timing.synchronize(device)
    except BaseException as exc:  # noqa: BLE001 - eager ran: this is a finding about torch.compile
        raise failure("compile", exc, ctx.path, f"compiled call {index} raised") from None
    elapsed = time.perf_counter() - t0
    capture.call_finished(loaded.target, a_compiled)
    return CallRecord(index, grads, snapshot, a_eager, a_compiled, out_eager, out_compiled), elapsed
