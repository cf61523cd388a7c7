"""What each compile did, per graph: its nodes before and after AOT autograd, the kernels Inductor
wrote, what the FX-graph and AOT-autograd caches did, and the config in force. Read from the
structured trace the worker already records (records.py) and from what the counting backend saw
(calls.py). Worker-side; no torch import of its own.

On both torch versions the trace carries, per compiled module, `inductor_output_code` (the
module's source, on a cache hit too), `inductor_post_grad_graph` (an artifact on a miss, a
top-level key on an AOT-autograd hit) and an `fx_graph_cache_{hit,miss,bypass}` artifact; per
frame, an `aotautograd_cache_*` artifact and `compilation_metrics`. A frame with a backward has
two modules under one compile id, the forward first. Compile ids start again at 0/0 after
`torch._dynamo.reset()` (a program may reset between compiles): each `dynamo_output_graph` of an
id begins that id's next compile, and a graph's facts are those of its own compile, the k-th graph
under an id the k-th compile of it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from playground.engine.report import CompiledModule, ConfigSetting, Graph, GraphAnatomy

#: A kernel the module defines: CPU `cpp_pybinding` (or `cpp`), CUDA `triton`.
KERNEL_DEF = re.compile(r"^(\w+) = async_compile\.(?:cpp_pybinding|cpp|triton)\(", re.M)
#: Library kernels the module calls, and ATen ops Inductor fell back to.
EXTERN_CALL = re.compile(r"extern_kernels\.(\w+)\(")
FALLBACK_CALL = re.compile(r"torch\.ops\.aten\.(\w+)\.\w+\(")
POST_GRAD_NODE = re.compile(r"= torch\.ops\.", re.M)
POST_GRAD_OP = re.compile(r"^\s*(\w+): \"[^\"]*\" = torch\.ops\.(\w+\.\w+)", re.M)
_PROVENANCE = ("inductor_provenance_tracking_node_mappings", "inductor_provenance_tracking_kernel_stack_traces")
_CACHE_ARTIFACT = re.compile(r"^(fx_graph_cache|aotautograd_cache)_(hit|miss|bypass)$")


@dataclass(frozen=True)
class BackendFacts:
    """What the counting backend saw of one graph as Dynamo handed it over."""

    fx_nodes: int
    config: tuple[ConfigSetting, ...] = ()


@dataclass
class Provenance:
    """What Inductor's provenance tracking (trace.provenance_tracking_level >= 1) says of one
    output module: kernel handle ("cpp_fused_sin_0:1", "extern_kernels.mm:2") -> the post-grad
    nodes it holds and their user stacks; post-grad node -> the Dynamo-graph nodes it came from."""

    code_to_post: dict[str, list[str]] = field(default_factory=dict)
    post_to_pre: dict[str, list[str]] = field(default_factory=dict)
    stacks: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class _Frame:
    codes: list[str] = field(default_factory=list)
    post_grad: list[int] = field(default_factory=list)
    #: post-grad node -> ATen op, per post-grad graph.
    post_grad_ops: list[dict[str, str]] = field(default_factory=list)
    provenance: list[Provenance] = field(default_factory=list)
    fx_cache: list[tuple[str, str]] = field(default_factory=list)
    aot_cache: str = ""
    ir_nodes: int | None = None


def kernels_in(code: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The kernels an Inductor output module defines, and the library/fallback kernels it calls."""
    kernels = tuple(KERNEL_DEF.findall(code))
    call = code.split("\ndef call(", 1)[-1] if "\ndef call(" in code else code
    extern = {*EXTERN_CALL.findall(call), *FALLBACK_CALL.findall(call)}
    return kernels, tuple(sorted(extern))


def config_settings(rows: list[tuple[str, str, Any, Any]]) -> tuple[ConfigSetting, ...]:
    """compat.config_not_default's rows as report values."""
    return tuple(ConfigSetting(module, name, _shown(value), _shown(default)) for module, name, value, default in rows)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 200 else text[:199] + "…"


def _compile_id(md: dict[str, Any]) -> str:
    return f"{md.get('frame_id')}/{md.get('frame_compile_id')}"


def _frames(trace: list[tuple[dict[str, Any], Any]]) -> dict[tuple[str, int], _Frame]:
    """The facts of each compile, keyed by (compile id, which compile of that id)."""
    frames: dict[tuple[str, int], _Frame] = {}
    compiles: dict[str, int] = {}

    def of(cid: str) -> tuple[str, int]:
        return cid, max(compiles.get(cid, 0) - 1, 0)

    for md, payload in trace:
        artifact = (md.get("artifact") or {}).get("name") if isinstance(md.get("artifact"), dict) else None
        if "dynamo_output_graph" in md:
            cid = _compile_id(md)
            compiles[cid] = compiles.get(cid, 0) + 1
        elif "inductor_output_code" in md and isinstance(payload, str):
            frame = frames.setdefault(of(_compile_id(md)), _Frame())
            frame.codes.append(payload)
            frame.provenance.append(Provenance())
        elif (artifact == "inductor_post_grad_graph" or "inductor_post_grad_graph" in md) and isinstance(payload, str):
            frame = frames.setdefault(of(_compile_id(md)), _Frame())
            frame.post_grad.append(len(POST_GRAD_NODE.findall(payload)))
            frame.post_grad_ops.append(dict(POST_GRAD_OP.findall(payload)))
        elif artifact in _PROVENANCE and isinstance(payload, str):
            frame = frames.setdefault(of(_compile_id(md)), _Frame())
            if frame.provenance:  # it follows the output module it describes
                _read_provenance(frame.provenance[-1], artifact, payload)
        elif artifact and (match := _CACHE_ARTIFACT.match(artifact)):
            frame = frames.setdefault(of(_compile_id(md)), _Frame())
            if match.group(1) == "fx_graph_cache":
                frame.fx_cache.append((match.group(2), _cache_key(payload)))
            else:
                frame.aot_cache = match.group(2)
        elif "compilation_metrics" in md:
            metrics = md["compilation_metrics"] or {}
            ir = metrics.get("ir_count")
            if isinstance(ir, int) and ir > 0:
                frames.setdefault(of(str(metrics.get("compile_id"))), _Frame()).ir_nodes = ir
    return frames


def _per_graph(trace: list[tuple[dict[str, Any], Any]], graphs: list[Graph]) -> list[tuple[Graph, _Frame]]:
    """Each graph beside the facts of its own compile (the k-th graph of an id: its k-th compile)."""
    frames = _frames(trace)
    seen: dict[str, int] = {}
    out = []
    for graph in graphs:
        cid = graph.compile_id or ""
        nth = seen.get(cid, 0)
        seen[cid] = nth + 1
        out.append((graph, frames.get((cid, nth), _Frame())))
    return out


def _read_provenance(into: Provenance, artifact: str, payload: str) -> None:
    try:
        data = json.loads(payload)
    except ValueError:
        return
    if not isinstance(data, dict):
        return
    if artifact.endswith("kernel_stack_traces"):
        into.stacks = {str(k): [str(t) for t in v] for k, v in data.items() if isinstance(v, list)}
        return
    # "cppCodeToPost" on CPU; the Triton side names it after its own code
    for key, value in data.items():
        if key.endswith("CodeToPost") and isinstance(value, dict):
            into.code_to_post.update({str(k): [str(n) for n in v] for k, v in value.items()})
    post_to_pre = data.get("postToPre")
    if isinstance(post_to_pre, dict):
        into.post_to_pre = {str(k): [str(n) for n in v] for k, v in post_to_pre.items()}


@dataclass(frozen=True)
class ModuleInfo:
    """One output module with what the kernels profile joins on: its FX-graph cache key (the
    profiler's `## Call CompiledFxGraph <key> ##`), its kernels, its provenance debug handles
    (only the handles present in this module: the provenance JSON can carry stale kernels of
    other graphs), the provenance and post-grad node -> ATen op."""

    graph: int
    compile_id: str
    pass_: str
    key: str
    kernels: tuple[str, ...]
    extern: tuple[str, ...]
    handles: tuple[str, ...]
    provenance: Provenance
    post_grad_ops: dict[str, str]


HANDLE = re.compile(r"# \[Provenance debug handles\] ([\w.]+:\d+)")


def modules(trace: list[tuple[dict[str, Any], Any]], graphs: list[Graph]) -> list[ModuleInfo]:
    """Every output module of the run's graphs, in graph order, forward before backward."""
    out = []
    for graph, frame in _per_graph(trace, graphs):
        cid = graph.compile_id or ""
        for i, code in enumerate(frame.codes):
            kernels, extern = kernels_in(code)
            out.append(
                ModuleInfo(
                    graph=graph.index,
                    compile_id=cid,
                    pass_="forward" if i == 0 else "backward",
                    key=frame.fx_cache[i][1] if i < len(frame.fx_cache) else "",
                    kernels=kernels,
                    extern=extern,
                    handles=tuple(dict.fromkeys(HANDLE.findall(code))),
                    provenance=frame.provenance[i],
                    post_grad_ops=frame.post_grad_ops[i] if i < len(frame.post_grad_ops) else {},
                )
            )
    return out


def _cache_key(payload: Any) -> str:
    try:
        key = json.loads(payload).get("key") if isinstance(payload, str) else None
    except (ValueError, AttributeError):
        return ""
    return key if isinstance(key, str) else ""


def anatomy(
    trace: list[tuple[dict[str, Any], Any]], graphs: list[Graph], facts: dict[int, BackendFacts]
) -> tuple[GraphAnatomy, ...]:
    """One GraphAnatomy per graph the backend was handed, in order."""
    out = []
    for graph, frame in _per_graph(trace, graphs):
        cid = graph.compile_id or ""
        seen = facts.get(graph.index)
        modules = []
        for i, code in enumerate(frame.codes):
            kernels, extern = kernels_in(code)
            cache, key = frame.fx_cache[i] if i < len(frame.fx_cache) else ("", "")
            modules.append(
                CompiledModule(
                    pass_="forward" if i == 0 else "backward",
                    post_grad_nodes=frame.post_grad[i] if i < len(frame.post_grad) else None,
                    kernels=kernels,
                    extern_kernels=extern,
                    fx_graph_cache=cache,
                    fx_graph_key=key,
                )
            )
        out.append(
            GraphAnatomy(
                graph=graph.index,
                compile_id=cid,
                fx_nodes=seen.fx_nodes if seen else 0,
                ops=graph.op_count,
                ir_nodes=frame.ir_nodes,
                aot_autograd_cache=frame.aot_cache,
                modules=tuple(modules),
                config=seen.config if seen else (),
            )
        )
    return tuple(out)
