"""The compiled code in words: what each compile made (nodes, kernels, caches, the config in
force) and, when the run profiled it, where the timed call's time went, kernel by kernel, with
the snippet lines each kernel came from and eager's top ops beside them."""

from __future__ import annotations

from playground.engine.report import GraphAnatomy, KernelsProfile, KernelTime, Report
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


def kernel_row(kernel: KernelTime) -> Line:
    """One profiled kernel: its name, time and share, its snippet lines and ATen ops (the
    Timing pane draws its share as a bar beside it)."""
    lines = f"  line{'s' if len(kernel.lines) > 1 else ''} {', '.join(map(str, kernel.lines))}" if kernel.lines else ""
    ops = f"  ({', '.join(kernel.aten_ops)})" if kernel.aten_ops else ""
    kind = f" [{kernel.kind}]" if kernel.kind == "extern" else ""
    return Line.of(f"{kernel.name}{kind}  {_us(kernel.us)}{_share(kernel.share)}{lines}{ops}", depth=1)


def _kernel_rows(profile: KernelsProfile) -> list[Line]:
    out = [kernel_row(kernel) for kernel in profile.kernels[:KERNELS_SHOWN]]
    if len(profile.kernels) > KERNELS_SHOWN:
        out.append(Line.of(f"… {len(profile.kernels) - KERNELS_SHOWN} more kernels", tag=DIM, depth=1))
    return out


# --- one snippet line's kernels: the Source pane's cursor, and any view that asks by line -----

#: What a kernel's kind is called beside its name (Inductor's own kernels need no word).
KIND_WORDS = {"extern": "library kernel"}


def kernels_by_line(report: Report) -> dict[int, tuple[KernelTime, ...]]:
    """Each snippet line that a profiled kernel holds ops from, and those kernels, slowest
    first (the profile's order); {} when the run did not profile."""
    profile = report.kernels_profile
    out: dict[int, list[KernelTime]] = {}
    for kernel in profile.kernels if profile is not None else ():
        for line in kernel.lines:
            out.setdefault(line, []).append(kernel)
    return {line: tuple(kernels) for line, kernels in out.items()}


def _others(kernel: KernelTime, line: int) -> str:
    others = [n for n in kernel.lines if n != line]
    if not others:
        return "from this line alone"
    return f"fused with line{'s' if len(others) > 1 else ''} {', '.join(map(str, others))}: one kernel for their ops"


def _spans(lines: tuple[int, ...]) -> str:
    """Line numbers with runs folded: (31, 32, 33, 40) is "31-33, 40"."""
    spans: list[list[int]] = []
    for n in sorted(lines):
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)


def line_kernel_label(kernels: tuple[KernelTime, ...], line: int) -> str:
    """The short words beside a line's gutter mark: its slowest kernel, its time and share, and
    the lines the kernel spans when it holds others' ops too (the cursor's rows say the rest)."""
    first = kernels[0]
    word = "LIBRARY KERNEL" if all(k.kind == "extern" for k in kernels) else "KERNEL"
    more = f", +{len(kernels) - 1} more" if len(kernels) > 1 else ""
    fused = f", lines {_spans(first.lines)}" if len(first.lines) > 1 else ""
    return f"{word}{'S' if len(kernels) > 1 else ''} {first.name} {_us(first.us)}{_share(first.share)}{fused}{more}"


def line_kernel_lines(report: Report, line: int, text: str = "", *, ask: str = "") -> tuple[Line, ...]:
    """For one snippet `line` (its source `text`): the kernels that hold its ops in the profiled
    call, each with its time and share of the call, its ATen ops and the other lines fused into
    it; or, plainly, why there is none. `ask` is how the view asks a run for the profile ("press
    k", "--kernels"), said when this report has none; "" when the runs already ask."""
    profile = report.kernels_profile
    if profile is None:
        if report.stage in ("traced", "diagnostics"):
            return (Line.of(f"line {line}: kernels pending (profiled after the timing)", tag=DIM),)
        if ask:
            return (
                Line.of(f"line {line}: this run has no kernels profile: {ask} to profile them", tag=WARN),
                Line.of("it costs each run a profiler pass and a compile with provenance", tag=DIM, depth=1),
            )
        return (Line.of(f"line {line}: this run has no kernels profile (it ended before the profile)", tag=WARN),)
    if not profile.calls:
        # The worker's note says why ("not profiled: only Inductor writes kernels (backend eager)").
        return (
            Line.of(f"line {line}: no kernels", tag=WARN),
            Line.of(profile.note or "no call was profiled", tag=DIM, depth=1),
        )
    kernels = kernels_by_line(report).get(line, ())
    if not kernels:
        return _no_kernel(report, line, text)
    return _line_kernels(report, profile, line, kernels)


def _line_kernels(
    report: Report, profile: KernelsProfile, line: int, kernels: tuple[KernelTime, ...]
) -> tuple[Line, ...]:
    total = sum(k.us or 0.0 for k in kernels)
    call = f" of the {_us(profile.compiled_us)} call" if profile.compiled_us else ""
    share = f" ({total / profile.compiled_us:.0%})" if profile.compiled_us else ""
    graphs = len({k.graph for k in profile.kernels}) > 1
    library = all(k.kind == "extern" for k in kernels)
    head = f"line {line}: {plural(len(kernels), 'library kernel' if library else 'kernel')}"
    out = [Line.of(f"{head}, {_us(total)}{call}{share}", tag=HEADING)]
    if library:
        out.append(Line.of("Inductor wrote no kernel for it: its op calls a library (extern)", tag=DIM, depth=1))
    for kernel in kernels[:KERNELS_SHOWN]:
        about = ", ".join(filter(None, (f"graph {kernel.graph}" if graphs else "", KIND_WORDS.get(kernel.kind, ""))))
        about = f" ({about})" if about else ""
        out.append(Line.of(f"{kernel.name}{about}  {_us(kernel.us)}{_share(kernel.share)}", depth=1))
        if kernel.aten_ops:
            out.append(Line.of(f"holds {', '.join(kernel.aten_ops)}", tag=DIM, depth=2))
        out.append(Line.of(_others(kernel, line), tag=DIM, depth=2))
    if len(kernels) > KERNELS_SHOWN:
        out.append(Line.of(f"… {len(kernels) - KERNELS_SHOWN} more kernels", tag=DIM, depth=1))
    if profile.note:
        out.append(Line.of(profile.note, tag=WARN, depth=1))
    return tuple(out)


def _no_kernel(report: Report, line: int, text: str) -> tuple[Line, ...]:
    """Why no profiled kernel holds an op from `line`, as far as the report can tell."""
    code = text.strip()
    if not code:
        return (Line.of(f"line {line} is blank: no code, no kernel", tag=DIM),)
    if code.startswith("#"):
        return (Line.of(f"line {line} is a comment: no code, no kernel", tag=DIM),)
    breaks = {site.line for site in report.graph_breaks} | {site.line for site in report.break_sites}
    if line in breaks:
        return (
            Line.of(f"line {line}: no kernel; the graph breaks here", tag=WARN),
            Line.of("what the line does runs in Python, between the compiled graphs", tag=DIM, depth=1),
        )
    timed = report.kernels_profile.timed_call if report.kernels_profile else None
    call = f"call {timed}" if timed else "the profiled call"
    return (
        Line.of(f"line {line}: no kernel of {call} came from this line; it runs", tag=DIM),
        # Two short lines, not one long one: they fit the Source pane at 80 columns unwrapped.
        Line.of("outside the compiled graph (setup, inputs(), a def line),", tag=DIM, depth=1),
        Line.of("in other calls only, or as ops that need none (a view, a shape)", tag=DIM, depth=1),
    )
