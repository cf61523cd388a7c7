"""The kernels profile: the timed call under torch's profiler, in a pass of its own after the
timing, joined to Inductor's output modules and their provenance, so each kernel carries its
measured time, the ATen ops and FX nodes it holds and the snippet lines they came from; eager's
top ops beside it. Only for runs that ask (`kernels`): the compile then has kernel profiling and
provenance on (compat.KERNEL_PROFILE_OPTIONS). Worker-side.

Joins, measured on 2.13 and 2.14 (CPU): a kernel's event is `graph_<id>_<kernel>` (the id frozen in
cached code: stripped) or `aten::<op>` for a library kernel, a direct child of
`## Call CompiledFxGraph <fx key> ##`, whose key is the module's FX-graph cache key ("None" with
the cache off: then the enclosing `Torch-Compiled Region: <compile id>` names the graph).
Times are medians per call: means on a shared machine are ruined by one descheduling.

A kernel's snippet lines come from the user stacks Inductor's provenance keeps per kernel. Those
travel with the FX-graph cache entry, which keys on the graph, not the file: a copy of the
snippet in another folder (every attendee's gallery copy) is served code whose stacks name the
first copy. Then the kernel's Dynamo-graph nodes are looked up in this run's own graph, whose
readable code marks each node with the snippet line that made it (only the innermost frame: a
node made inside a helper in another file has no line there), and a note says so.
"""

from __future__ import annotations

import re
import statistics
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from playground.engine.explain import snippet_line
from playground.engine.report import KernelsProfile, KernelTime, OpTime, Timings
from playground.worker import compat
from playground.worker.capture.anatomy import ModuleInfo, anatomy, modules
from playground.worker.capture.records import RunCapture
from playground.worker.run.spine.calls import CallsDone, clone_args

MARKER = "compile_playground.call"
#: The profiled pass aims at this long per side, within MIN_CALLS..MAX_CALLS calls.
PASS_S = 0.3
MIN_CALLS, MAX_CALLS = 5, 30
EAGER_TOP = 8
_GRAPH_PREFIX = re.compile(r"^graph_\d+_")
_FILE_LINE = re.compile(r'File "([^"]+)", line (\d+)')
#: In a GraphModule's readable code (print_readable, 2.13 and 2.14): the comment before the
#: nodes one stack made, `# File: /x/snip.py:5 in fn, code: y = torch.sin(x) * 2`, then
#: `sin: "f32[256]" = torch.sin(l_x_)`; any other comment ("No stacktrace found") ends it.
_GRAPH_FILE = re.compile(r"^\s*# File: (.+):(\d+) in ")
_GRAPH_NODE = re.compile(r"^\s*([A-Za-z_]\w*)\s*(?::[^=]*)?=\s")


def profile(
    done: CallsDone, target: Callable[..., Any], capture: RunCapture, timings: Timings | None, device: str
) -> KernelsProfile:
    """Profile the last call of inputs(), compiled and eager, and join the kernels."""
    record = done.records[-1]
    compiled_args, eager_args = clone_args(record.snapshot), clone_args(record.snapshot)
    one_ms = timings.compiled_ms if timings is not None and timings.compiled_ms else None
    calls = MAX_CALLS if one_ms is None else max(MIN_CALLS, min(MAX_CALLS, int(PASS_S * 1e3 / max(one_ms, 1e-3))))
    code = compat.target_code(target)
    entries_before = len(compat.cache_entries(code))
    for _ in range(2):  # warm: the first call after the timing must not be the one measured
        done.compiled(*compiled_args)
    events = compat.profiled(lambda: done.compiled(*compiled_args), calls, device, MARKER)
    notes = []
    if len(compat.cache_entries(code)) != entries_before:
        notes.append("the profiled calls compiled again: the profile includes a recompile")
    found = modules(capture.trace, capture.graphs)
    node_lines = {g.index: graph_node_lines(g.code, capture.snippet_path) for g in capture.graphs}
    served = {
        (graph.graph, module.pass_)
        for graph in anatomy(capture.trace, capture.graphs, capture.backend_facts)
        for module in graph.modules
        if "hit" in (module.fx_graph_cache, graph.aot_autograd_cache)
    }
    kernels, per_call, elsewhere = _kernels(events, found, capture.snippet_path, node_lines, served)
    eager_events = compat.profiled(lambda: target(*eager_args), calls, device, MARKER)
    eager_us = _median([e.time_range.elapsed_us() for e in eager_events if e.name == MARKER])
    compiled_us = per_call["call"]
    kernels = tuple(
        KernelTime(
            **{**_fields(k), "share": round(k.us / compiled_us, 4) if k.us is not None and compiled_us else None}
        )
        for k in kernels
    )
    if elsewhere:
        unmapped = sum(1 for k in kernels if not k.lines)
        where = f"compiled from {elsewhere[0]}" + (f" and {len(elsewhere) - 1} more" if len(elsewhere) > 1 else "")
        notes.append(
            "Inductor's FX-graph cache served kernels "
            f"{where} (its key is the graph, not the file): their lines are read from this run's own graph"
            + (f", and {unmapped} kernel(s) have none there" if unmapped else "")
            + "; --cold compiles afresh, with the stacks of this file"
        )
    if not kernels:
        notes.append("no kernel events: this backend or device wrote none the profiler sees")
    if device.startswith("cuda"):
        # Unverified on a GPU: Triton launches record a CPU-side event named for the kernel
        # (triton_heuristics.py), whose CPU time is the launch, not the kernel's run.
        notes.append("on CUDA the kernel times are the CPU-side launches, not the GPU's run (not yet checked on a GPU)")
    return KernelsProfile(
        timed_call=record.index,
        calls=calls,
        compiled_us=_round(compiled_us),
        region_us=_round(per_call["region"]),
        lookup_us=_round(per_call["lookup"]),
        kernels_us=_round(per_call["kernels"]),
        kernels=kernels,
        eager_us=_round(eager_us),
        eager_ops=_eager_ops(eager_events, eager_us),
        note="; ".join(notes),
    )


def _fields(value: Any) -> dict[str, Any]:
    return {name: getattr(value, name) for name in value.__dataclass_fields__}


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _ancestors(event: Any) -> list[Any]:
    out = []
    parent = event.cpu_parent
    while parent is not None and len(out) < 1000:
        out.append(parent)
        parent = parent.cpu_parent
    return out


def graph_node_lines(code: str, snippet_path: str) -> dict[str, int]:
    """Node name -> the snippet line that made it, from a Dynamo graph's readable code."""
    found: dict[str, int] = {}
    line: int | None = None
    for text in code.splitlines():
        marked = _GRAPH_FILE.match(text)
        if marked:
            line = snippet_line(marked.group(1), int(marked.group(2)), snippet_path)
            continue
        if text.lstrip().startswith("#"):
            line = None
            continue
        node = _GRAPH_NODE.match(text)
        if node and line is not None:
            found.setdefault(node.group(1), line)
    return found


def _kernels(
    events: list[Any],
    found: list[ModuleInfo],
    snippet_path: str,
    node_lines: dict[int, dict[str, int]],
    served: set[tuple[int, str]],
) -> tuple[list[KernelTime], dict[str, float | None], list[str]]:
    """Each kernel with its median time per call, the medians per call of the whole call, the
    regions, the cache lookups and all kernels, and the other files whose stacks the cache
    served (see the module's docstring): only for a module the cache served (`served`: graph,
    pass), since a target imported from another file has stacks that never pass through the
    snippet either."""
    by_key = {m.key: m for m in found if m.key}
    forward = {m.compile_id: m for m in found if m.pass_ == "forward"}
    calls: dict[int, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    call_us: dict[int, float] = {}
    order: dict[tuple[int, str], tuple[ModuleInfo, str, str]] = {}
    for event in events:
        chain = _ancestors(event)
        if event.name == MARKER:
            call_us[id(event)] = event.time_range.elapsed_us()
            continue
        top = next((a for a in reversed(chain) if a.name == MARKER), None)
        if top is None:
            continue
        sums = calls[id(top)]
        elapsed = event.time_range.elapsed_us()
        if event.name.startswith(compat.EVENT_REGION):
            sums["region"] += elapsed
        elif event.name == compat.EVENT_LOOKUP:
            sums["lookup"] += elapsed
        parent = event.cpu_parent
        if parent is None or not parent.name.startswith(compat.EVENT_CALL_GRAPH):
            continue
        module = _module_of(parent.name, chain, by_key, forward)
        if module is None:
            continue
        name = _GRAPH_PREFIX.sub("", event.name)
        if name in module.kernels:
            kind = "triton" if name.startswith("triton_") else "cpp"
        elif name.startswith("aten::") and name[len("aten::") :] in module.extern:
            kind, name = "extern", name[len("aten::") :]
        else:
            continue  # an allocation or a view inside the module: not a kernel
        order.setdefault((module.graph, name), (module, name, kind))
        sums[f"k:{module.graph}:{name}"] += elapsed
        sums["kernels"] += elapsed
    per_call = {
        "call": _median(list(call_us.values())),
        "region": _median([calls[c].get("region", 0.0) for c in call_us]),
        "lookup": _median([calls[c].get("lookup", 0.0) for c in call_us]),
        "kernels": _median([calls[c].get("kernels", 0.0) for c in call_us]),
    }
    rows = []
    elsewhere: dict[str, None] = {}
    for (graph, name), (module, _, kind) in order.items():
        us = _median([calls[c].get(f"k:{graph}:{name}", 0.0) for c in call_us])
        ops, nodes, lines, others = _provenance(module, name, kind, snippet_path)
        if not lines and others and (graph, module.pass_) in served:
            elsewhere.update(dict.fromkeys(others))
            own = node_lines.get(graph, {})
            lines = tuple(sorted({own[n] for n in nodes if n in own}))
        rows.append(KernelTime(graph, module.compile_id, name, kind, _round(us), None, ops, nodes, lines))
    rows.sort(key=lambda k: -(k.us or 0.0))
    return rows, per_call, list(elsewhere)


def _module_of(
    call_name: str, chain: list[Any], by_key: dict[str, ModuleInfo], forward: dict[str, ModuleInfo]
) -> ModuleInfo | None:
    parts = call_name.split()
    key = parts[3] if len(parts) > 3 else ""
    if key in by_key:
        return by_key[key]
    for ancestor in chain:  # the FX cache off: the key is "None"
        if ancestor.name.startswith(compat.EVENT_REGION):
            return forward.get(ancestor.name.rsplit(" ", 1)[-1])
    return None


def _provenance(
    module: ModuleInfo, name: str, kind: str, snippet_path: str
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[int, ...], list[str]]:
    """The ATen ops, Dynamo-graph nodes and snippet lines behind one kernel of `module`, and
    the files whose stacks it holds instead of the snippet's (a cache entry of another copy)."""
    prefix = f"extern_kernels.{name}:" if kind == "extern" else f"{name}:"
    handles = [h for h in module.handles if h.startswith(prefix)]
    prov = module.provenance
    post = list(dict.fromkeys(n for h in handles for n in prov.code_to_post.get(h, [])))
    ops = tuple(sorted({module.post_grad_ops.get(n, "") for n in post} - {""}))
    nodes = tuple(dict.fromkeys(p for n in post for p in prov.post_to_pre.get(n, [])))
    lines = set()
    others: dict[str, None] = {}
    for h in handles:
        for stack in prov.stacks.get(h, []):
            frames = _FILE_LINE.findall(stack)
            found = {snippet_line(file, int(line), snippet_path) for file, line in frames} - {None}
            lines.update(found)  # type: ignore[arg-type]
            if frames and not found:
                # A stack that never passes through the snippet: the compiled function's frame
                # (the outermost) is another file's, whose compile the cache kept.
                others[frames[0][0]] = None
    return ops, nodes, tuple(sorted(lines)), list(others)


def _eager_ops(events: list[Any], eager_us: float | None) -> tuple[OpTime, ...]:
    """Eager's ATen ops by self time per call, medians over the calls (a wrapper such as
    aten::matmul does not count its children twice)."""
    per_call: dict[int, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    calls = [id(e) for e in events if e.name == MARKER]
    for event in events:
        if not event.name.startswith("aten::"):
            continue
        top = next((a for a in reversed(_ancestors(event)) if a.name == MARKER), None)
        if top is not None:
            per_call[id(top)][event.name] += event.self_cpu_time_total
    names = {name for sums in per_call.values() for name in sums}
    medians = {name: _median([per_call[c].get(name, 0.0) for c in calls]) or 0.0 for name in names}
    top = sorted(medians.items(), key=lambda kv: -kv[1])[:EAGER_TOP]
    return tuple(
        OpTime(name, round(us, 3), round(us / eager_us, 4) if eager_us else None) for name, us in top if us > 0
    )
