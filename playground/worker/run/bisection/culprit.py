"""What the bisector's culprit names, read in this process: the config switch that works around
it (`workaround`: a subsystem that is one switch, a random op's decomposition, one decomposition
taken out of Inductor's table, a pass turned off by name), the op its debug info names, and the
snippet line of the first node that calls that op (`op_line`). Imports torch only inside the
functions."""

from __future__ import annotations

import os
from typing import Any

from playground.worker.run.bisection.bisect_snippet import load_snippet, snippet_settings, target_of
from playground.worker.run.spine import decomp_table

#: Each subsystem whose fix is a config switch, in --config's syntax.
WORKAROUNDS: dict[str, dict[str, Any]] = {
    "fallback_random": {"inductor.fallback_random": True},
    "emulate_precision_casts": {"inductor.emulate_precision_casts": True},
    "layout_optimization": {"inductor.layout_optimization": False},
    "comprehensive_padding": {"inductor.comprehensive_padding": False},
}
#: Subsystems that are Inductor's passes, turned off by name.
PASS_SUBSYSTEMS = ("joint_graph_passes", "post_grad_passes", "pre_grad_passes")
#: Random ops whose decomposition draws other numbers than eager's kernel; with
#: fallback_random=True Inductor keeps torch's own op (measured: GPT-2's native_dropout).
RANDOM_OPS = frozenset(
    {"native_dropout", "dropout", "bernoulli", "bernoulli_", "rand", "rand_like", "randn", "randn_like"}
    | {"randint", "randint_like", "uniform", "uniform_", "normal", "normal_", "exponential", "multinomial"}
)


def workaround(backend: str, subsystem: str | None, debug_info: str | None) -> dict[str, Any] | None:
    """The config that turns the culprit off, `{"config": {KEY: VALUE}}` in --config's syntax,
    or None when no switch does."""
    name = subsystem.removeprefix("inductor_") if subsystem else None
    if name in WORKAROUNDS:
        return {"config": dict(WORKAROUNDS[name])}
    if name == "decomposition" and op_name(debug_info) in RANDOM_OPS:
        return {"config": dict(WORKAROUNDS["fallback_random"])}
    if name == "decomposition" and (op := _overload_name(debug_info)):
        # No torch switch drops one decomposition; ours takes it out of Inductor's table.
        return {"config": {decomp_table.KEY: [op]}}
    if subsystem in PASS_SUBSYSTEMS and debug_info:
        return {"config": {"inductor.disabled_passes": debug_info}}
    return None


def op_name(debug_info: str | None) -> str | None:
    """The op a bisect's debug_info names, `<OpOverload(op='aten.sin', ...)>` -> "sin"."""
    if not debug_info:
        return None
    marker = "op='"
    if marker in debug_info:
        qualified = debug_info.split(marker, 1)[1].split("'", 1)[0]
        return qualified.rsplit(".", 1)[-1]
    return None


def _overload_name(debug_info: str | None) -> str | None:
    """The overload a decomposition's debug_info names, `<OpOverload(op='aten.sin',
    overload='default')>` -> "aten.sin.default"; None when it names none."""
    if not debug_info or "op='" not in debug_info:
        return None
    op = debug_info.split("op='", 1)[1].split("'", 1)[0]
    marker = "overload='"
    if marker not in debug_info:
        return op
    overload = debug_info.split(marker, 1)[1].split("'", 1)[0]
    return f"{op}.{overload}"


def op_line(snippet: str, config: dict[str, Any], op: str) -> int | None:
    """In this process: the snippet line of the first FX node Dynamo captured calling `op`
    (by its name), read from the node's stack trace."""
    import torch

    lines: list[int] = []
    path = os.path.abspath(snippet)

    def recorder(gm: Any, _example: Any) -> Any:
        for node in gm.graph.nodes:
            name = getattr(node.target, "__name__", str(node.target))
            if node.op in ("call_function", "call_method") and name == op and not lines:
                trace = node.meta.get("stack_trace") or ""
                for row in trace.splitlines():
                    row = row.strip()
                    if row.startswith(f'File "{path}", line '):
                        lines.append(int(row.split(", line ", 1)[1].split(",", 1)[0]))
        return gm.forward

    module = load_snippet(snippet)
    target = target_of(module, snippet_settings(module))
    compiled = torch.compile(target, backend=recorder)
    for args in module["inputs"]():
        compiled(*(args if isinstance(args, tuple) else (args,)))
        break
    return lines[-1] if lines else None
