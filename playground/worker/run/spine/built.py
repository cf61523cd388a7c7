"""What each process of a run built from the snippet's bytes, as digests: the module's own
top-level values (numbers, strings, tensors), the buffers and parameters of its modules at
load, and each call's inputs. Worker-side.

The compiled calls run in the run's child, the eager and float64 references in processes of
their own (reference.py), each from a fresh load of the same bytes with the same seeds. Every
comparison between them assumes they built the same function: a snippet whose module-level
code reads the process (`OFFSET = os.getpid() % 97`, the time, an unseeded generator, the
environment) gives each process another one, and then eager, compiled and float64 differ by
whatever that value does, which no tolerance or rounding rule may forgive. Each process
records its digests right after loading (the float64 one before it widens anything) and per
call before the call; equivalence compares them and names what differs.
"""

from __future__ import annotations

import hashlib
import itertools
import math
from dataclasses import dataclass, field
from typing import Any

import torch

from playground.worker.run.spine.leaves import leaves, plain
from playground.worker.run.spine.safe_text import safe_repr, type_name

#: A digest and what the report shows of the value ("59", "tensor float32[64]").
Seen = tuple[str, str]
#: Names listed per difference; the rest are counted.
MAX_NAMED = 4
#: How deep the module's own values are digested, how many leaves of each top-level name (a
#: dict of a million entries must not hide the names after it), and how many in all.
MAX_WALK_DEPTH, MAX_PER_NAME, MAX_VALUES = 4, 64, 4000
_SCALARS = (bool, int, float, complex, str, bytes)


@dataclass
class Built:
    """One process's digests. Plain strings only: pickled from a reference process."""

    values: dict[str, Seen] = field(default_factory=dict)
    state: dict[str, Seen] = field(default_factory=dict)
    inputs: dict[int, dict[str, Seen]] = field(default_factory=dict)


def seen(value: Any) -> Seen | None:
    """A value's digest and its short form, or None for what is not digested (functions,
    classes, modules, objects of the snippet's own classes)."""
    try:
        # type(), not isinstance: isinstance reads a __class__ the snippet's object may make raise
        if issubclass(type(value), torch.Tensor):
            return _tensor(value)
        if type(value) in _SCALARS:
            text = repr(value)
            shown = safe_repr(value)
            if isinstance(value, float) and not math.isfinite(value):
                shown = text
            return hashlib.sha256(f"{type_name(value)}:{text}".encode()).hexdigest()[:16], shown
    except Exception:  # noqa: BLE001 - a value we cannot read is simply not digested
        return None
    return None


def _tensor(t: torch.Tensor) -> Seen:
    shown = f"tensor {str(t.dtype).replace('torch.', '')}{list(t.shape)}"
    h = hashlib.sha256(f"{t.dtype}:{tuple(t.shape)}:{t.layout}".encode())
    if t.is_meta:
        return h.hexdigest()[:16], shown
    for part in t.unbind() if t.is_nested else (t,):
        h.update(_bytes(plain(part)))
    return h.hexdigest()[:16], shown


def _bytes(t: torch.Tensor) -> bytes | memoryview:
    t = t.contiguous()
    if t.numel() == 0:
        return b""
    if t.is_complex():
        t = torch.view_as_real(t).contiguous()
    if t.dtype == torch.bool:
        t = t.to(torch.uint8)
    # The raw bytes, through an untyped view: every dtype (bfloat16, float8) has one.
    return memoryview(t.reshape(-1).view(torch.uint8).numpy()) if _numpy() else repr(t.tolist()).encode()


def _numpy() -> bool:
    try:
        import numpy  # noqa: F401 - torch's .numpy() needs it; without it the slow path
    except ImportError:
        return False
    return True


def at_load(
    namespace: dict[str, Any], modules: list[tuple[str, torch.nn.Module]], state: dict[str, Any]
) -> Built | None:
    """The digests of a freshly loaded snippet: its top-level values, the plain attributes of
    its modules (`self.scale = ...`) and the followed tensors (`state`, by the tracker's names).
    None when the snippet's objects would not let them be read (then nothing is compared)."""
    try:
        return _at_load(namespace, modules, state)
    except Exception:  # noqa: BLE001 - the snippet's objects may refuse anything
        return None


def _at_load(namespace: dict[str, Any], modules: list[tuple[str, torch.nn.Module]], state: dict[str, Any]) -> Built:
    built = Built()
    own = namespace.get("__name__")
    for name, value in list(namespace.items()):
        if name.startswith("__") or issubclass(type(value), torch.Tensor):
            continue  # module-level tensors are followed state
        found: dict[str, Seen] = {}
        _walk(found, name, value, own, 0)
        built.values.update(found)
        if len(built.values) >= MAX_VALUES:
            break
    for prefix, module in modules:
        for sub_name, sub in module.named_modules(prefix=prefix):
            for attr, value in list(vars(sub).items()):
                if attr.startswith("_") or attr == "training" or issubclass(type(value), torch.Tensor):
                    continue
                found = seen(value)
                if found is not None:
                    built.values[f"{sub_name}.{attr}"] = found
    for name, tensor in state.items():
        built.state[name] = _tensor(tensor)
    return built


def _walk(into: dict[str, Seen], path: str, value: Any, own: Any, depth: int) -> None:
    """`value`'s scalars and tensors by path, into containers (dicts, lists, tuples) and the
    snippet's own classes and their instances (`CFG["offset"]`, `Config.scale`), as deep as
    MAX_WALK_DEPTH and as many as MAX_PER_NAME (`into` holds one top-level name's)."""
    if len(into) >= MAX_PER_NAME:
        return
    found = seen(value)
    if found is not None:
        into[path] = found
        return
    if depth >= MAX_WALK_DEPTH:
        return
    try:
        room = MAX_PER_NAME - len(into)
        if type(value) is dict:
            items = itertools.islice(value.items(), room)
            children = [(f"{path}[{safe_repr(k)}]", v) for k, v in items if type(k) in _SCALARS]
        elif type(value) in (list, tuple):
            children = [(f"{path}[{i}]", v) for i, v in enumerate(itertools.islice(value, room))]
        elif issubclass(type(value), type) and vars(value).get("__module__") == own:
            children = [(f"{path}.{k}", v) for k, v in list(vars(value).items()) if not k.startswith("__")]
        elif vars(type(value)).get("__module__") == own and not issubclass(type(value), torch.nn.Module):
            children = [(f"{path}.{k}", v) for k, v in list(object.__getattribute__(value, "__dict__").items())]
            children = [(p, v) for p, v in children if not p.rsplit(".", 1)[-1].startswith("__")]
        else:
            return
    except Exception:  # noqa: BLE001 - a hostile object: not walked
        return
    for child_path, item in children:
        _walk(into, child_path, item, own, depth + 1)


def of_inputs(args: Any) -> dict[str, Seen]:
    """One call's inputs, leaf by leaf (before the call, before any widening)."""
    found: dict[str, Seen] = {}
    for path, leaf in leaves(args, "input"):
        digest = seen(leaf)
        if digest is not None:
            found[path] = digest
    return found


def differences(mine: Built, other: Built, who: str) -> list[str]:
    """What `other` (the process `who` names) built differently from `mine` (the run's child),
    one phrase per kind of value: what differs, and its value in each process."""
    out = []
    for what, a, b in (("module value", mine.values, other.values), ("state at load", mine.state, other.state)):
        words = _differ(what, a, b, who)
        if words:
            out.append(words)
    calls = sorted(set(mine.inputs) & set(other.inputs))
    for index in calls:
        words = _differ(f"call {index}'s", mine.inputs[index], other.inputs[index], who)
        if words:
            out.append(words)
            break  # the first call whose inputs differ says it; later ones follow from it
    return out


def _differ(what: str, a: dict[str, Seen], b: dict[str, Seen], who: str) -> str:
    names = [n for n in a if n not in b or a[n][0] != b[n][0]] + [n for n in b if n not in a]
    if not names:
        return ""
    parts = []
    for name in names[:MAX_NAMED]:
        here = a[name][1] if name in a else "absent"
        there = b[name][1] if name in b else "absent"
        if here == there:  # a tensor of the same shape: other values
            parts.append(f"{name} ({here}) holds other values in {who} than in the compiled run's process")
        else:
            parts.append(f"{name} is {here} in the compiled run's process, {there} in {who}")
    more = f" (and {len(names) - MAX_NAMED} more)" if len(names) > MAX_NAMED else ""
    return f"{what} {'; '.join(parts)}{more}"
