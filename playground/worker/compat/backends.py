"""The backends torch.compile offers, the callable a backend name stands for, and what Dynamo does
around a backend's result."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch._dynamo

#: Debug backends worth offering: the stages of torch's troubleshooting ladder (matrix --ladder),
#: which list_backends() hides behind its "debug" tag.
LADDER_DEBUG_BACKENDS = ("aot_eager_decomp_partition",)


def list_backends() -> list[str]:
    try:
        names = set(torch._dynamo.list_backends())
        names |= set(LADDER_DEBUG_BACKENDS) & set(torch._dynamo.list_backends(exclude_tags=()))
        return sorted(names)
    except Exception:  # noqa: BLE001 - a broken third-party backend must not kill the worker
        return []


def real_backend(
    name: str, mode: str | None, dynamic: bool | None, options: dict[str, Any] | None = None
) -> Callable[..., Any]:
    """The callable torch.compile(backend=name, mode=mode, options=options) would hand graphs
    to, so that a counting wrapper around it sees exactly what the chosen backend sees."""
    if name == "inductor":
        return torch._TorchCompileInductorWrapper(mode, options, dynamic)
    from torch._dynamo.backends.registry import lookup_backend

    return lookup_backend(name)


def eager_graph_code(compiled: Callable[..., Any]) -> Callable[..., Any]:
    """What Dynamo does with a backend's result right after the backend returns (output_graph,
    checked on 2.13 and 2.14): a lazy GraphModule (use_lazy_graph_module) or its `_lazy_forward`
    gets its Python code written now, and the real forward is called from then on. A backend
    that wraps the result hides it from Dynamo, so it must do the same itself."""
    try:
        from torch.fx._lazy_graph_module import _LazyGraphModule
    except ImportError:  # pragma: no cover - a torch without lazy graph modules
        return compiled
    owner = getattr(compiled, "__self__", None)
    if isinstance(compiled, _LazyGraphModule):
        _LazyGraphModule.force_recompile(compiled)
        return compiled
    if isinstance(owner, _LazyGraphModule) and getattr(compiled, "__name__", "") == "_lazy_forward":
        _LazyGraphModule.force_recompile(owner)
        return owner.forward
    return compiled


def current_compile_id() -> str | None:
    try:
        from torch._guards import CompileContext

        cid = CompileContext.current_compile_id()
        return str(cid) if cid is not None else None
    except Exception:  # noqa: BLE001
        return None


def error_on_graph_break() -> Any:
    """A context in which a graph break raises (torch._dynamo.error_on_graph_break, 2.8+)."""
    return torch._dynamo.error_on_graph_break(True)
