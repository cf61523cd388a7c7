"""The first diverging op: the first intermediate value where compiled and eager part.

The bisector names the pass or subsystem; this names where the numbers first differ. Dynamo's
own graphs of the snippet's first call are recorded (a backend that keeps each graph and the
real inputs it was handed, then runs it eagerly), and each graph is rewritten so that every
intermediate tensor is an output. That graph runs three ways from the same seed: eagerly, as
float64 (its float inputs cast, the parameters included: Dynamo lifts them to inputs), and
compiled with Inductor under the run's config. The first node, in the graph's order, whose
compiled value fails the run's rule (bisect.py's `_leaf_ok`: the snippet's tolerance, the
accuracy harness's, then the float64 comparison) is the answer, with its snippet line from
the node's stack trace.

What this method cannot see, and says: with every intermediate an output, Inductor cannot
fuse across them, so a difference made only inside a fused kernel (a reduced-precision cast
that fusion keeps in registers) may not show; only the forward is compared (a difference made
in the backward alone leaves every forward value equal); in-place results are skipped (their
value is the last write, not the one at that node).
"""

from __future__ import annotations

import math
import os
from typing import Any

#: Said with every answer: which of torch's means was used.
HOW = "Dynamo's graph with every intermediate as an output, run eagerly, in float64 and with Inductor"


def _stack_line(node: Any, path: str) -> tuple[int | None, str | None]:
    """(the snippet line, the innermost frame as "file:line") from a node's stack trace."""
    snippet_line: int | None = None
    innermost: str | None = None
    for row in (node.meta.get("stack_trace") or "").splitlines():
        row = row.strip()
        if not row.startswith('File "') or ", line " not in row:
            continue
        file = row[len('File "') :].split('"', 1)[0]
        number = row.split(", line ", 1)[1].split(",", 1)[0]
        if not number.isdigit():
            continue
        innermost = f"{file}:{number}"
        if os.path.abspath(file) == path:
            snippet_line = int(number)
    return snippet_line, innermost


def _op_name(node: Any) -> str:
    import torch.fx.node

    if node.op == "call_function":
        try:
            name = torch.fx.node._get_qualified_name(node.target)
        except Exception:  # noqa: BLE001 - a callable without a qualified name
            return getattr(node.target, "__name__", str(node.target))
        if name.startswith("torch._C."):
            # A binding's home is private (torch._C._nn.gelu): the name the user wrote is the
            # public module that holds the same object.
            short = name.rsplit(".", 1)[-1]
            for public, module in (("torch.nn.functional", torch.nn.functional), ("torch", torch)):
                if getattr(module, short, None) is node.target:
                    return f"{public}.{short}"
        return name
    if node.op == "call_method":
        return f"Tensor.{node.target}"
    return str(node.target)


def _in_place(node: Any) -> bool:
    name = node.target if isinstance(node.target, str) else getattr(node.target, "__name__", "")
    return isinstance(name, str) and name.endswith("_") and not name.endswith("__")


def _widened(values: list[Any]) -> list[Any]:
    import torch

    return [v.double() if isinstance(v, torch.Tensor) and v.is_floating_point() else v for v in values]


def _copies(values: list[Any]) -> list[Any]:
    import torch

    return [v.detach().clone() if isinstance(v, torch.Tensor) else v for v in values]


def _in_graph(gm: Any, example: list[Any], tolerance: Any, seed: int) -> dict[str, Any] | None:
    """The first node of `gm` whose compiled value fails the rule, or None."""
    import torch
    import torch.fx

    from playground.worker.run.bisection.bisect_snippet import _leaf_ok

    watched = [
        node
        for node in gm.graph.nodes
        if node.op in ("call_function", "call_method", "call_module")
        and isinstance(node.meta.get("example_value"), torch.Tensor)
        and not _in_place(node)
    ]
    if not watched:
        return None
    graph = torch.fx.Graph()
    copied: dict[Any, Any] = {}
    graph.graph_copy(gm.graph, copied)
    graph.output(tuple(copied[node] for node in watched))
    every = torch.fx.GraphModule(gm, graph)

    def run(fn: Any, args: list[Any]) -> list[Any]:
        torch.manual_seed(seed)
        with torch.no_grad():
            return list(fn(*args))

    eager = run(every, _copies(example))
    try:
        wide = run(every, _widened(_copies(example)))
    except Exception:  # noqa: BLE001 - no float64 values: judged without them
        wide = [None] * len(watched)
    compiled = run(torch.compile(every, backend="inductor", fullgraph=True), _copies(example))
    for node, e, c, r in zip(watched, eager, compiled, wide, strict=True):
        if not isinstance(e, torch.Tensor) or not isinstance(c, torch.Tensor):
            continue
        if _leaf_ok(e, c, r, tolerance):
            continue
        line, source = _stack_line(node, os.path.abspath(gm.meta.get("snippet", "")))
        diff = None
        if e.shape == c.shape and (e.is_floating_point() or e.is_complex()) and e.numel():
            value = float((e.double() - c.double()).abs().max())
            diff = value if math.isfinite(value) else None
        return {"op": _op_name(node), "node": node.name, "line": line, "source": source, "max_abs_diff": diff}
    return None


def first_diverging_op(snippet: str, config: dict[str, Any]) -> dict[str, Any]:
    """In this process: the first diverging op of the snippet's first call, as the contract's
    `first_diverging_op` object (`op` null, with a note, when every intermediate agrees)."""
    import torch

    from playground.worker.run.bisection.bisect_snippet import prepared

    path = os.path.abspath(snippet)
    torch.manual_seed(0)
    module, settings, target, tolerance = prepared(path, config)
    graphs: list[tuple[Any, list[Any]]] = []

    def recorder(gm: Any, example: list[Any]) -> Any:
        graphs.append((gm, _copies(list(example))))
        return gm.forward

    kwargs = {"dynamic": settings["dynamic"]} if settings.get("dynamic") is not None else {}
    recorded = torch.compile(target, backend=recorder, **kwargs)
    seed = 7
    for args in module["inputs"]():
        torch.manual_seed(seed)
        recorded(*(args if isinstance(args, tuple) else (args,)))
        break
    for index, (gm, example) in enumerate(graphs):
        gm.meta["snippet"] = path
        found = _in_graph(gm, example, tolerance, seed)
        if found is not None:
            return {**found, "graph": index, "how": HOW}
    note = (
        "every forward intermediate agrees: the difference is in the backward, in a later call, or "
        "inside a fused kernel that this method's unfused graph does not make"
        if graphs
        else "Dynamo recorded no graph on the first call"
    )
    return {"op": None, "graph": None, "how": HOW, "note": note}
