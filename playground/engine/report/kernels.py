"""The timed call's kernels under torch's profiler, and eager's ops beside them (extension fields)."""

from __future__ import annotations

from dataclasses import dataclass

from playground.engine.report.wire import Wire


@dataclass(frozen=True)
class KernelTime(Wire):
    """One kernel of the timed call: `kind` "cpp", "triton" or "extern" (a library kernel such as
    mm, or an ATen fallback); `us` its median time per call (inclusive) and `share` of the
    compiled call; the ATen ops and Dynamo-graph (FX) nodes it holds, and the snippet lines those
    came from (Inductor's provenance)."""

    graph: int = 0
    compile_id: str = ""
    name: str = ""
    kind: str = ""
    us: float | None = None
    share: float | None = None
    aten_ops: tuple[str, ...] = ()
    fx_nodes: tuple[str, ...] = ()
    lines: tuple[int, ...] = ()


@dataclass(frozen=True)
class OpTime(Wire):
    """One ATen op of the eager call: its self time per call (mean over the profiled calls)."""

    name: str = ""
    us: float = 0.0
    share: float | None = None


@dataclass(frozen=True)
class KernelsProfile(Wire):
    """The timed call under torch's profiler, in a pass of its own after the timing (so the
    timings carry no profiler overhead): medians per call of the whole compiled call
    (`compiled_us`, profiler overhead included), of the compiled regions, of Dynamo's cache lookup
    and guards (`lookup_us`), of the kernels (`kernels_us`, their sum); each kernel; eager's top
    ops beside it, so a reader sees what fused."""

    timed_call: int | None = None
    calls: int = 0
    compiled_us: float | None = None
    region_us: float | None = None
    lookup_us: float | None = None
    kernels_us: float | None = None
    kernels: tuple[KernelTime, ...] = ()
    eager_us: float | None = None
    eager_ops: tuple[OpTime, ...] = ()
    note: str = ""
