"""The leaves of a nested value (tuples, lists, dicts, dataclasses, namedtuples), each with the
path that reaches it, written as Python would: out[0], out['key'], out.field; what a tensor
leaf is, and a tensor as plain dense CPU values. Every side's calls, digests and comparisons
walk values this way. Worker-side.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import torch

from playground.worker.run.spine.safe_text import safe_repr

#: Deeper than this (or a container that holds itself) is not walked further.
MAX_DEPTH = 32


def is_namedtuple(value: Any) -> bool:
    return isinstance(value, tuple) and isinstance(getattr(type(value), "_fields", None), tuple)


def is_dataclass_instance(value: Any) -> bool:
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


def named_fields(value: Any) -> list[tuple[str, Any]]:
    """(name, value) of a dataclass's or namedtuple's fields; an unset field is skipped."""
    if is_namedtuple(value):
        names = [str(n) for n in type(value)._fields]
        pairs = list(zip(names, value))
        # A namedtuple subclass may carry more items than fields.
        pairs += [(f"[{i}]", v) for i, v in enumerate(value) if i >= len(names)]
        return pairs
    pairs = []
    for f in dataclasses.fields(value):
        try:
            pairs.append((f.name, getattr(value, f.name)))
        except BaseException:  # noqa: BLE001 - a field declared but never set (init=False)
            continue
    return pairs


def field_path(path: str, name: str) -> str:
    return f"{path}{name}" if name.startswith("[") else f"{path}.{name}"


def leaves(value: Any, path: str = "out", _depth: int = 0) -> Iterator[tuple[str, Any]]:
    """(path, leaf) for every leaf of nested tuples, lists, dicts, dataclasses and namedtuples.

    Paths read like Python: out[0], out['key'], out.field. Other objects are leaves (a returned
    nn.Module's parameters must not join the default loss); deeper than MAX_DEPTH is a leaf too."""
    try:
        if _depth > MAX_DEPTH:
            children = None
        elif isinstance(value, dict):
            children = [(f"{path}[{safe_repr(key)}]", item) for key, item in list(value.items())]
        elif is_namedtuple(value) or is_dataclass_instance(value):
            children = [(field_path(path, name), item) for name, item in named_fields(value)]
        elif isinstance(value, (tuple, list)):
            children = [(f"{path}[{i}]", item) for i, item in enumerate(list(value))]
        else:
            children = None
    except BaseException:  # noqa: BLE001 - a container subclass whose iteration raises is a leaf
        children = None
    if children is None:
        yield path, value
        return
    for child_path, item in children:
        yield from leaves(item, child_path, _depth + 1)


def is_tensor(value: Any) -> bool:
    # isinstance() consults a __class__ property, which a snippet's object may make raise.
    return issubclass(type(value), torch.Tensor)


def plain(t: torch.Tensor) -> torch.Tensor:
    """A dense, strided CPU copy without autograd: what the arithmetic below can work on."""
    t = t.detach()
    if t.is_quantized:
        t = t.dequantize()
    if t.layout != torch.strided:  # sparse COO/CSR/CSC/BSR/BSC, mkldnn
        t = t.to_dense()
    return t.to("cpu").resolve_conj().resolve_neg()
