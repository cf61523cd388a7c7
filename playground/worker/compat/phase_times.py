"""One frame's compile time split into phases, from torch's compilation metrics."""

from __future__ import annotations

from typing import Any

#: The structured trace's `compilation_metrics` fields that time one frame's compile, nested:
#: entire frame > backend compile (AOT autograd + Inductor) > Inductor > code generation >
#: the wait for C++/Triton compilation (`triton_compile_time_us`, also the C++ compile on CPU).
#: Measured on 2.13 and 2.14: seconds as `*_time_s`, microseconds as `*_us`.
_PHASE_FIELDS = {
    "entire": ("entire_frame_compile_time_s", "duration_us"),
    "backend": ("backend_compile_time_s", "aot_autograd_cumulative_compile_time_us"),
    "inductor": ("inductor_compile_time_s", "inductor_cumulative_compile_time_us"),
    "code_gen": ("code_gen_time_s", "inductor_code_gen_cumulative_compile_time_us"),
    "async_compile": ("", "triton_compile_time_us"),
}


def _metric_s(metrics: dict[str, Any], phase: str) -> float:
    seconds, micros = _PHASE_FIELDS[phase]
    value = metrics.get(seconds) if seconds else None
    if isinstance(value, (int, float)):
        return float(value)
    value = metrics.get(micros)
    return float(value) / 1e6 if isinstance(value, (int, float)) else 0.0


def phase_times(metrics: dict[str, Any], spans: dict[str, float] | None = None) -> dict[str, float]:
    """One frame's compile split into disjoint phases that sum to `total_s`: dynamo_s (bytecode
    tracing, guards, restarts), aot_s (backend compile outside Inductor: AOT autograd, or the
    whole backend for one without it), inductor_s (Inductor's passes and lowering), codegen_s
    (writing kernels and wrapper), compile_s (C++/Triton compilation: the wait on the async
    pool plus the `compile_file` runs made on the compiling thread), other_s (torch's own
    bookkeeping around the frame, e.g. logging these metrics). `spans` are the frame's chromium
    events summed by name (compile_phases.chromium_spans): `dynamo` is torch's outermost compile timer."""
    spans = spans or {}
    entire = _metric_s(metrics, "entire")
    backend = min(_metric_s(metrics, "backend"), entire)
    inductor = min(_metric_s(metrics, "inductor"), backend)
    code_gen = min(_metric_s(metrics, "code_gen"), inductor)
    compiling = min(_metric_s(metrics, "async_compile") + spans.get("compile_file", 0.0), code_gen)
    total = max(spans.get("dynamo", 0.0), entire)
    return {
        "dynamo_s": entire - backend,
        "aot_s": backend - inductor,
        "inductor_s": inductor - code_gen,
        "codegen_s": code_gen - compiling,
        "compile_s": compiling,
        "other_s": total - entire,
        "total_s": total,
    }
