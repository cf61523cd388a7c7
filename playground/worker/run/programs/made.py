"""What a program's compiled callables are recorded as: each torch.compile call (`Made`), the
bounds the run is under (`Bounds`), the records a callable owns beside the capture's lists
(`Owned`), our own files kept out of Dynamo's trace (`Unseen`), and the counting backend that
stands in for the program's own while comparing equal exactly where it does (`CountingBackend`).
Worker-side; program_compiles.py builds and uses them.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


class Unseen:
    """Our patches' files, for the length of the program, in Dynamo's own list of files it
    never traces (trace_rules.FORCE_SKIP_FILES): a frame of ours that runs while a compiled
    callable's callback is set (our Tensor.backward, os._exit, a call's wrapper, the counting
    backend's first run of a graph) is run as Python runs it, never traced into a graph break
    of its own; called from traced code it is a break at the program's line, as the torch or
    C function it stands for is."""

    def __init__(self, *files: str) -> None:
        self.files = {os.path.abspath(f) for f in files}
        self.added: set[str] = set()

    def __enter__(self) -> Unseen:
        try:
            from torch._dynamo import trace_rules

            skip = trace_rules.FORCE_SKIP_FILES
        except (ImportError, AttributeError):  # pragma: no cover - a torch without the list
            return self
        self.added = self.files - skip
        skip |= self.added
        return self

    def __exit__(self, *exc: object) -> None:
        from torch._dynamo import trace_rules

        trace_rules.FORCE_SKIP_FILES.difference_update(self.added)
        self.added = set()


@dataclass
class Made:
    """One compiled callable as the program made it."""

    index: int
    name: str
    kind: str
    file: str
    line: int | None
    options: dict[str, str]
    toggled: dict[str, str]
    #: The object handed to torch.compile (the function, module or bound method).
    original: Any = None
    calls: int = 0
    #: The program-wide number of its first call (the report's order); None: never called.
    first_call: int | None = None
    #: Why torch.compile was called unchanged, when it was (the counts are then the capture's).
    unwrapped: str = ""
    #: The first exception a call of it raised, as torch gave it ("Type: first line"), and
    #: which of its calls raised it.
    raised: str = ""
    raised_at: int | None = None
    #: Its newest steady call, kept for torch.utils.benchmark (program_bench.py); None: none.
    steady: Any = None


@dataclass
class Bounds:
    """How long a program may run: calls of compiled callables, and seconds (None: unbounded)."""

    max_calls: int | None = None
    deadline: float | None = None
    started: float = field(default_factory=time.monotonic)


class Owned(list):  # type: ignore[type-arg]
    """One of the capture's lists, with the callable each item arrived under beside it
    (`owners`: a Made's index, 0 for none), told by `owner` at each append."""

    def __init__(self, items: list[Any], owner: Callable[[], int]) -> None:
        super().__init__(items)
        self.owners = [0] * len(items)
        self.owner = owner
        # Two threads' appends must not interleave between an item and its owner.
        self.lock = threading.Lock()

    def append(self, item: Any) -> None:
        owner = self.owner()
        with self.lock:
            super().append(item)
            self.owners.append(owner)

    def of(self, index: int) -> list[Any]:
        return [item for item, owner in zip(self, self.owners, strict=False) if owner == index]


class CountingBackend:
    """A program's backend (what torch.compile built from its arguments, or what it handed
    torch._dynamo.optimize) behind the counting wrapper. Equal to another exactly where the
    two backends are: Dynamo's BACKEND_MATCH compares them with `==`. Anything else Dynamo asks
    of a backend (compiler_name, get_compiler_config, reset, ...) is the real one's."""

    def __init__(self, real: Any, counting: Callable[..., Any], *, untraced: bool = False) -> None:
        self.real = real
        self._counting = counting
        # Copied, not delegated: a class with __getattr__ as a backend crashes Dynamo's frame
        # evaluation on 2.13 (a segfault at the first call). Where no frame is ever traced (the
        # eager reference), Inductor's config is not asked for: torch.compile reads it when it
        # makes the callable, and that import alone is a second of the reference's time.
        for name in _BACKEND_NAMES - ({"get_compiler_config"} if untraced else set()):
            if hasattr(real, name):
                setattr(self, name, getattr(real, name))

    def __call__(self, gm: Any, example_inputs: Any, **kwargs: Any) -> Any:
        return self._counting(gm, example_inputs, **kwargs)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CountingBackend) and same_backend(self.real, other.real)

    def __hash__(self) -> int:
        return hash(type(self.real))


#: What torch._dynamo reads off a backend (eval_frame, output_graph, repro, backends/*).
_BACKEND_NAMES = frozenset(
    {"compiler_name", "get_compiler_config", "backend_ctx_ctor", "reset", "compiler_fn", "__name__", "config"}
)


def same_backend(a: Any, b: Any) -> bool:
    if a is b:
        return True
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - a backend whose == raises is another backend
        return False
