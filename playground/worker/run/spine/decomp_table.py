"""Inductor's decomposition table as a run's code leaves it. Worker-side.

Code may register its own decompositions in `torch._inductor.decomposition.decompositions`
(a library's fix, or a mistake: snippets/bisect/wrong_decomposition.py). Two things follow:

- **Torch's compile caches do not key on that table.** Inductor's FX-graph cache keys on the
  graph after decomposition, but the AOT-autograd cache keys on Dynamo's graph before it, so a
  graph cached under one table is served under another (measured on 2.13 and 2.14.1: a process
  that registers a wrong `aten.sin` then one that does not, sharing the cache folder, both get
  the wrong values; in the other order both get right ones). A run whose code changed the table
  therefore compiles with Inductor's caches off: it neither reads an entry compiled under
  torch's own table nor leaves one that a later run of other code would be served.
- **No torch switch removes one entry.** `playground.without_decompositions` (a list of op
  names, `aten.sin.default`, or a packet `aten.sin` for all its overloads) does: the named ops
  are taken out of the table just before each compile, after the code has registered its own,
  so Inductor lowers the op itself. It is the workaround bisection offers for a decomposition
  that makes values differ.

Checked at the backend's call (run/spine/calls.py's counting backend, a program's too) and after a
bisection step's load: the latest moment before Inductor reads the table.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

#: The config key of ours, in --config's syntax.
KEY = "playground.without_decompositions"

#: The op names the run's settings take out of the table (switches.applied sets it).
REMOVED: tuple[str, ...] = ()


@dataclass
class _Seen:
    """What this run's compiles met, for its note."""

    foreign: set[str] = field(default_factory=set)  # ops the code (or a library) registered
    removed: set[str] = field(default_factory=set)  # overloads REMOVED took out
    found: set[str] = field(default_factory=set)  # REMOVED's names that took something out
    settled: bool = False  # a compile read Inductor's table


_seen = _Seen()


class BadOpName(ValueError):
    """A name that is no op of this torch."""


def names(value: Any) -> tuple[str, ...]:
    """The setting's value as op names: a string (comma-separated) or a list of strings."""
    if isinstance(value, str):
        items: Iterable[Any] = value.split(",")
    elif isinstance(value, (list, tuple)):
        items = value
    else:
        raise BadOpName(f"{KEY} takes an op name such as 'aten.sin.default', or a list of them; not {value!r}")
    out = []
    for item in items:
        if not isinstance(item, str) or not item.strip():
            raise BadOpName(f"{KEY} takes op names such as 'aten.sin.default'; not {item!r}")
        out.append(item.strip().removeprefix("torch.ops."))
    return tuple(out)


def overloads(name: str) -> list[Any]:
    """The OpOverloads `name` means: `aten.sin.default` one, `aten.sin` every overload."""
    import torch

    parts = name.split(".")
    if len(parts) not in (2, 3):
        raise BadOpName(f"{KEY}: {name!r} is not an op name such as 'aten.sin.default' or 'aten.sin'")
    try:
        packet = getattr(getattr(torch.ops, parts[0]), parts[1])
        if len(parts) == 3:
            return [getattr(packet, parts[2])]
        return [getattr(packet, overload) for overload in packet.overloads()]
    except (AttributeError, RuntimeError) as exc:
        raise BadOpName(f"torch {torch.__version__} has no op {name}") from exc


def check(value: Any) -> tuple[str, ...]:
    """The setting's op names, each checked against this torch's ops; BadOpName else."""
    found = names(value)
    for name in found:
        overloads(name)
    return found


@contextlib.contextmanager
def in_force(removed: tuple[str, ...]) -> Iterator[None]:
    """One run's table rules: `removed` taken out at each compile, what is seen noted afresh;
    Inductor's caches as they were afterwards (a template that runs in process goes on)."""
    global REMOVED, _seen
    import torch._inductor.config as inductor_config

    before = (REMOVED, inductor_config.force_disable_caches)
    REMOVED = tuple(removed)
    _seen = _Seen()
    try:
        yield
    finally:
        REMOVED, inductor_config.force_disable_caches = before


def _own(fn: Any) -> bool:
    """Whether a table entry is torch's own: a function defined in torch (partials unwrapped)."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    module = getattr(fn, "__module__", None) or ""
    return module == "torch" or module.startswith("torch.")


def settle() -> None:
    """Just before a compile: take REMOVED's ops out of Inductor's table, and turn Inductor's
    caches off for the rest of this process when the table is not torch's own (see above).
    Set on the config module itself, not patched: the backward is compiled lazily, after the
    backend's call has returned, and must not be cached either."""
    import sys

    table_module = sys.modules.get("torch._inductor.decomposition")
    if table_module is None:
        return  # Inductor not imported: no compile of its can read the table
    table = table_module.decompositions
    _seen.settled = True
    changed = False
    for name in REMOVED:
        popped = [op for op in overloads(name) if table.pop(op, None) is not None]
        if popped:
            _seen.removed.update(str(op) for op in popped)
            _seen.found.add(name)
            changed = True
    foreign = {str(op) for op, fn in table.items() if not _own(fn)}
    _seen.foreign |= foreign
    if changed:
        # torch's table without fallback_random is a cached copy of this one.
        cached = getattr(table_module, "fast_random_decomps", None)
        if hasattr(cached, "cache_clear"):
            cached.cache_clear()
    if foreign or _seen.removed:
        import torch._inductor.config as inductor_config

        inductor_config.force_disable_caches = True


def note() -> str | None:
    """What the run should be told about the table, or None when it was torch's own."""
    parts = []
    if _seen.foreign:
        ops = ", ".join(sorted(_seen.foreign)[:4]) + (" …" if len(_seen.foreign) > 4 else "")
        parts.append(
            f"The code registers its own decomposition in Inductor's table ({ops}); torch's compile "
            "caches do not key on that table (a graph cached under another table would be served), "
            "so Inductor compiled with its caches off."
        )
    if _seen.removed:
        parts.append(
            f"{KEY}: {', '.join(sorted(_seen.removed))} taken out of Inductor's decomposition table "
            "before the compile (Inductor lowers the op itself); its caches off."
        )
    if not _seen.settled:
        if REMOVED:
            parts.append(f"{KEY} did nothing: no compile of this run read Inductor's decomposition table.")
    elif absent := [name for name in REMOVED if name not in _seen.found]:
        parts.append(f"{KEY}: Inductor's decomposition table has no {', '.join(absent)}: nothing taken out for it.")
    return " ".join(parts) or None
