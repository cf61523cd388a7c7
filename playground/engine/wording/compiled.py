"""The compiled code in words: what each compile made (nodes, kernels, caches, the config in
force) and, when the run profiled it, where the timed call's time went, kernel by kernel, with
the snippet lines each kernel came from and eager's top ops beside them."""

from __future__ import annotations

from playground.engine.report import GraphAnatomy, KernelsProfile, Report
from playground.engine.wording.line import DIM, HEADING, WARN, Line, plural

#: Config values listed per graph before the rest are counted.
CONFIG_SHOWN = 4
#: Kernels and eager ops listed before the rest are counted.
KERNELS_SHOWN = 8
EAGER_OPS_SHOWN = 5


def _cache(word: str) -> str:
    return word or "off"


def anatomy_lines(report: Report) -> tuple[Line, ...]:
    """One line per graph, a line per module Inductor wrote for it, and the config that differed
    from torch's defaults; () when the report has none."""
    if not report.compile_anatomy:
        return ()
    out = [Line.of("what each compile made", tag=HEADING)]
    configs = {graph.config for graph in report.compile_anatomy}
    shared = len(configs) == 1
    for graph in report.compile_anatomy:
        out += _graph_lines(graph, config=not shared)
    if shared:
        out += _config_lines(report.compile_anatomy[0], depth=1)
    return tuple(out)


def _config_lines(graph: GraphAnatomy, depth: int) -> list[Line]:
    """The config values that differed from torch's defaults while the graph compiled."""
    if not graph.config:
        return []
    shown = ", ".join(f"{c.module}.{c.name}={c.value}" for c in graph.config[:CONFIG_SHOWN])
    more = f" (+{len(graph.config) - CONFIG_SHOWN} more)" if len(graph.config) > CONFIG_SHOWN else ""
    return [Line.of(f"config not at torch's default: {shown}{more}", tag=DIM, depth=depth)]


def _graph_lines(graph: GraphAnatomy, config: bool) -> list[Line]:
    ir = f", torch's ir_count {graph.ir_nodes}" if graph.ir_nodes is not None else ""
    aot = f", AOT cache {graph.aot_autograd_cache}" if graph.aot_autograd_cache else ""
    out = [
        Line.of(
            f"graph {graph.graph} [{graph.compile_id}]: {plural(graph.fx_nodes, 'FX node')} ({plural(graph.ops, 'op')}){ir}{aot}",
            depth=1,
        )
    ]
    for module in graph.modules:
        nodes = f"{plural(module.post_grad_nodes, 'post-grad node')}, " if module.post_grad_nodes is not None else ""
        extern = f", library: {', '.join(module.extern_kernels)}" if module.extern_kernels else ""
        out.append(
            Line.of(
                f"{module.pass_}: {nodes}{plural(len(module.kernels), 'kernel')}{extern}, "
                f"FX cache {_cache(module.fx_graph_cache)}",
                tag=DIM,
                depth=2,
            )
        )
    return out + (_config_lines(graph, depth=2) if config else [])


def _us(value: float | None) -> str:
    return "?" if value is None else (f"{value:.0f} us" if value >= 10 else f"{value:.1f} us")


def _share(value: float | None) -> str:
    return "" if value is None else f" ({value:.0%})"


def kernel_lines(report: Report) -> tuple[Line, ...]:
    """The kernels profile: the call, where its time went, each kernel with its lines, then
    eager's top ops; () when the run did not profile."""
    profile = report.kernels_profile
    if profile is None:
        return ()
    if not profile.calls:
        return (Line.of(f"kernels profile: {profile.note or 'no call was profiled'}", tag=WARN),)
    call = f"call {profile.timed_call}" if profile.timed_call else "the timed call"
    out = [
        Line.of(
            f"kernels of {call}, profiled in a pass of their own ({plural(profile.calls, 'call')}, medians)",
            tag=HEADING,
        )
    ]
    if profile.note:
        out.append(Line.of(profile.note, tag=WARN, depth=1))
    if profile.compiled_us is not None:
        kernels = profile.kernels_us
        share = f"{kernels / profile.compiled_us:.0%}" if kernels and profile.compiled_us else "?"
        out.append(
            Line.of(
                f"compiled call {_us(profile.compiled_us)} under the profiler: kernels {_us(kernels)} ({share}), "
                f"guards and cache lookup {_us(profile.lookup_us)}",
                depth=1,
            )
        )
    out += _kernel_rows(profile)
    if profile.eager_ops:
        ops = ", ".join(f"{op.name} {_us(op.us)}" for op in profile.eager_ops[:EAGER_OPS_SHOWN])
        out.append(Line.of(f"eager {_us(profile.eager_us)}, top ops: {ops}", tag=DIM, depth=1))
    return tuple(out)


def _kernel_rows(profile: KernelsProfile) -> list[Line]:
    out = []
    for kernel in profile.kernels[:KERNELS_SHOWN]:
        lines = (
            f"  line{'s' if len(kernel.lines) > 1 else ''} {', '.join(map(str, kernel.lines))}" if kernel.lines else ""
        )
        ops = f"  ({', '.join(kernel.aten_ops)})" if kernel.aten_ops else ""
        kind = f" [{kernel.kind}]" if kernel.kind == "extern" else ""
        out.append(Line.of(f"{kernel.name}{kind}  {_us(kernel.us)}{_share(kernel.share)}{lines}{ops}", depth=1))
    if len(profile.kernels) > KERNELS_SHOWN:
        out.append(Line.of(f"… {len(profile.kernels) - KERNELS_SHOWN} more kernels", tag=DIM, depth=1))
    return out
