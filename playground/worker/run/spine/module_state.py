"""The state a call can change besides its output: the buffers and parameters of the snippet's
modules and its module-level tensors, followed from call to call. Worker-side.

A forward that adds to a buffer, BatchNorm's running statistics, a training step's parameters:
eager and compiled must leave them the same, call after call. Each side of a run (the compiled
calls, the eager reference, the float64 reference) keeps a tracker of its own and reports, after
each call, the tensors whose values changed in that call. Changes are found by value, not by
`_version`: `.data` writes and Inductor's in-kernel stores into a mutated buffer do not always
move the version counter.
"""

from __future__ import annotations

import types
from typing import Any

import torch

from playground.worker.run.spine import built

#: Parameters are followed only while the snippet's parameters stay under this size (two copies
#: are kept: at load and at the last change); buffers and module-level tensors always are.
MAX_PARAM_BYTES = 256 * 2**20


def _named_modules(namespace: dict[str, Any], target: Any) -> list[tuple[str, torch.nn.Module]]:
    """The snippet's modules by the name it gave them: `model`, then other module-level ones."""
    found: list[tuple[str, torch.nn.Module]] = []
    seen: set[int] = set()
    if isinstance(target, torch.nn.Module):
        found.append(("model" if namespace.get("model") is target else "fn", target))
        seen.add(id(target))
    for name, value in list(namespace.items()):
        # type(), not isinstance: isinstance reads a __class__ the snippet may make raise
        if name.startswith("__") or not issubclass(type(value), torch.nn.Module) or id(value) in seen:
            continue
        seen.add(id(value))
        found.append((name, value))
    return found


def _nbytes(t: torch.Tensor) -> int:
    try:
        return t.numel() * t.element_size()
    except Exception:  # noqa: BLE001 - exotic tensors: count them as large
        return MAX_PARAM_BYTES


class StateTracker:
    """One side's view of the snippet's state: what changed in each call."""

    def __init__(self, module: types.ModuleType, target: Any) -> None:
        self.namespace = module.__dict__
        self.modules = _named_modules(self.namespace, target)
        self.module_ids = {id(m) for _, m in self.modules}
        params = self._params()
        self.with_params = sum(_nbytes(t) for t in params.values()) <= MAX_PARAM_BYTES
        self.note = (
            ""
            if self.with_params
            else f"parameters not compared after each call: the snippet's exceed {MAX_PARAM_BYTES >> 20} MiB"
        )
        self.last: dict[str, torch.Tensor] = {name: _copy(t) for name, t in self.current().items()}
        #: The values at load: the same on every side (the same bytes and seeds), so a tensor
        #: that only one side changes is compared with this on the other.
        self.initial = dict(self.last)
        #: What this process built at load, for showing that every process built the same.
        self.built = built.at_load(self.namespace, self.modules, self.initial)

    def _params(self) -> dict[str, torch.Tensor]:
        found: dict[str, torch.Tensor] = {}
        for prefix, module in self.modules:
            for name, param in module.named_parameters():
                found.setdefault(f"{prefix}.{name}", param)
        return found

    def current(self) -> dict[str, torch.Tensor]:
        """Every followed tensor now, by the path the user would write."""
        found: dict[str, torch.Tensor] = {}
        for prefix, module in self.modules:
            for name, buf in module.named_buffers():
                if isinstance(buf, torch.Tensor):
                    found.setdefault(f"{prefix}.{name}", buf)
        if self.with_params:
            found.update({k: v for k, v in self._params().items() if k not in found})
        for name, value in list(self.namespace.items()):
            if not name.startswith("__") and type(value) in (torch.Tensor, torch.nn.Parameter):
                found.setdefault(name, value)
        return found

    def changes(self) -> dict[str, torch.Tensor]:
        """The followed tensors whose value changed since the last call (copies, detached)."""
        changed: dict[str, torch.Tensor] = {}
        for name, tensor in self.current().items():
            before = self.last.get(name)
            if before is not None and same(before, tensor):
                continue
            copy = _copy(tensor)
            changed[name] = copy
            self.last[name] = copy
        return changed


def _copy(t: torch.Tensor) -> torch.Tensor:
    return t.detach().clone()


def same(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Equal values (NaN equal to NaN), same shape, dtype, device and layout."""
    try:
        if a.shape != b.shape or a.dtype != b.dtype or a.device != b.device or a.layout != b.layout:
            return False
        if a.layout != torch.strided:
            a, b = a.to_dense(), b.to_dense()
        b = b.detach()
        if a.is_floating_point() or a.is_complex():
            return bool(torch.allclose(a, b, rtol=0.0, atol=0.0, equal_nan=True))
        return bool(torch.equal(a, b))
    except Exception:  # noqa: BLE001 - a tensor we cannot read is taken as changed
        return False
