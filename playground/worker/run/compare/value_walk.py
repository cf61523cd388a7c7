"""Eager against compiled, walked side by side: one comparison entry per leaf of the output,
or of the mutated inputs. Worker-side.

The outputs are the user's objects: anything may come back (dataclasses, namedtuples, sparse
tensors, generators, objects whose `==`, `bool()` or `repr()` raise). The walk never raises: a
difference of structure, type, shape, dtype or layout is a mismatch entry whose `name` is the
path to it; a value it cannot compare (a generator, a meta tensor) is an entry with
`compared: false` and a note saying why, and is not a mismatch.
"""

from __future__ import annotations

import dataclasses
import inspect
import numbers
import sys
import types
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

import torch

from playground.engine.report import Comparison
from playground.worker.run.compare.python_values import attributes, compare_number, eq_verdict
from playground.worker.run.compare.rows import not_compared, row
from playground.worker.run.compare.tensor_diff import compare_tensors
from playground.worker.run.spine.leaves import (
    MAX_DEPTH,
    field_path,
    is_dataclass_instance,
    is_namedtuple,
    is_tensor,
    named_fields,
)
from playground.worker.run.spine.safe_text import describe_exc, safe_repr, type_name

#: Entries listed per compared value; the rest are summed up in one entry, so a snippet that
#: returns a list of a million floats does not produce a report of a million lines.
MAX_LISTED = 200


@dataclasses.dataclass(frozen=True)
class Unsent:
    """Stands for a value the eager reference could not send across processes (pickle refused
    it: a generator, a lambda, a class made per call): not compared, and said so."""

    type_name: str
    why: str


def _iterator_kind(value: Any) -> str | None:
    if inspect.isgenerator(value):
        return "a generator"
    if inspect.iscoroutine(value):
        return "a coroutine"
    if inspect.isasyncgen(value):
        return "an async generator"
    if isinstance(value, Iterator):
        return f"an iterator ({type_name(value)})"
    return None


def _is_ndarray(value: Any) -> bool:
    # Look numpy up rather than import it: a snippet that never imported it returns no arrays.
    np = sys.modules.get("numpy")
    return np is not None and isinstance(value, np.ndarray)


class _Walk:
    """Eager and compiled values side by side; collects one entry per leaf."""

    def __init__(self, call: int, override: dict[str, float] | None) -> None:
        self.call = call
        self.override = override
        self.entries: list[Comparison] = []
        self.unlisted_ok = 0
        self.unlisted_bad = 0
        self.active: set[tuple[int, int]] = set()

    def add(self, entry: Comparison) -> None:
        # Past the limit keep listing failures (up to twice as many), and only count the rest.
        if len(self.entries) < MAX_LISTED or (not entry.ok and len(self.entries) < 2 * MAX_LISTED):
            self.entries.append(entry)
        elif entry.ok:
            self.unlisted_ok += 1
        else:
            self.unlisted_bad += 1

    def finish(self, root: str) -> list[Comparison]:
        if self.unlisted_ok or self.unlisted_bad:
            note = f"{self.unlisted_ok + self.unlisted_bad} more leaves compared, not listed"
            if self.unlisted_bad:
                note += f"; {self.unlisted_bad} of them differ"
            self.entries.append(row(f"{root} (rest)", self.call, self.unlisted_bad == 0, note))
        return self.entries

    def mismatch(self, path: str, note: str, **fields: Any) -> None:
        self.add(row(path, self.call, False, note, **fields))

    def visit(self, e: Any, a: Any, path: str, depth: int = 0) -> None:
        try:
            self._visit(e, a, path, depth)
        except BaseException as exc:  # noqa: BLE001 - the last line of defence: never raise
            self.add(not_compared(path, self.call, f"comparing raised {describe_exc(exc)}"))

    def _visit(self, e: Any, a: Any, path: str, depth: int) -> None:
        if type(e) is Unsent:
            # An iterator is not compared wherever it comes from (consuming it would run code).
            why = (
                _iterator_kind(a)
                or f"the eager reference's {e.type_name} could not be sent between processes ({e.why})"
            )
            self.add(not_compared(path, self.call, why, dtype=e.type_name))
            return
        if is_tensor(e) or is_tensor(a):
            self._tensors(e, a, path)
            return
        kind = _iterator_kind(e)
        if kind is not None and _iterator_kind(a) is not None:
            # Consuming them would run the snippet's code outside the compared call (torch.compile
            # of a generator function compiles nothing: the body runs lazily when iterated).
            self.add(not_compared(path, self.call, kind, dtype=type_name(e)))
            return
        if type(e) is not type(a):
            self.mismatch(path, f"type {type_name(a)} != eager {type_name(e)}", dtype=type_name(e))
            return
        if e is a:
            self.add(row(path, self.call, True, dtype=type_name(e)))
            return
        if depth >= MAX_DEPTH:
            self.add(not_compared(path, self.call, f"nested deeper than {MAX_DEPTH} levels"))
            return
        key = (id(e), id(a))
        if key in self.active:
            self.add(not_compared(path, self.call, "the value contains itself"))
            return
        self.active.add(key)
        try:
            self._value(e, a, path, depth)
        finally:
            self.active.discard(key)

    def _tensors(self, e: Any, a: Any, path: str) -> None:
        if is_tensor(e) and is_tensor(a):
            self.add(compare_tensors(path, e, a, self.call, self.override))
        else:
            other = type_name(e) if is_tensor(a) else type_name(a)
            side = "compiled" if is_tensor(a) else "eager"
            self.mismatch(path, f"tensor in {side} only; the other side gave {other}")

    def _value(self, e: Any, a: Any, path: str, depth: int) -> None:
        """Same type on both sides, not identical: walk containers, compare everything else."""
        if is_namedtuple(e) or is_dataclass_instance(e):
            self._pairs(named_fields(e), named_fields(a), path, depth, "fields")
        elif isinstance(e, Mapping):
            self._mapping(e, a, path, depth)
        elif isinstance(e, (list, tuple)):
            items_e, items_a = list(e), list(a)
            if len(items_e) != len(items_a):
                self.mismatch(path, f"length {len(items_a)} != eager {len(items_e)}", dtype=type_name(e))
            elif not items_e:
                self.add(row(path, self.call, True, "no items", dtype=type_name(e)))
            for i, (x, y) in enumerate(zip(items_e, items_a)):
                self.visit(x, y, f"{path}[{i}]", depth + 1)
        elif isinstance(e, numbers.Number) and (entry := compare_number(path, e, a, self.call, self.override)):
            self.add(entry)
        elif _is_ndarray(e):
            self._ndarray(e, a, path)
        else:
            self._object(e, a, path, depth)

    def _pairs(
        self, pairs_e: list[tuple[str, Any]], pairs_a: list[tuple[str, Any]], path: str, depth: int, what: str
    ) -> None:
        """Named parts side by side (fields, items, attributes); parts on one side only fail."""
        names_e, names_a = [n for n, _ in pairs_e], [n for n, _ in pairs_a]
        if names_e != names_a:
            missing = [n for n in names_e if n not in names_a]
            extra = [n for n in names_a if n not in names_e]
            self.mismatch(path, f"{what} differ: missing in compiled {missing}, extra in compiled {extra}")
        by_name = dict(pairs_a)
        for name, item in pairs_e:
            if name in by_name:
                self.visit(item, by_name[name], field_path(path, name), depth + 1)
        if not pairs_e and not pairs_a:
            self.add(row(path, self.call, True, f"no {what}"))

    def _mapping(self, e: Mapping[Any, Any], a: Mapping[Any, Any], path: str, depth: int) -> None:
        # Membership through the mappings themselves: hash and identity first, so tensor keys
        # (hashed by id) never reach Tensor.__eq__.
        items_e, items_a = list(e.items()), list(a.items())
        missing = [k for k, _ in items_e if k not in a]
        extra = [k for k, _ in items_a if k not in e]
        if missing or extra:
            self.mismatch(
                path,
                f"keys differ: missing in compiled {safe_repr(missing)}, extra in compiled {safe_repr(extra)}",
                dtype=type_name(e),
            )
        for k, item in items_e:
            if k in a:
                self.visit(item, a[k], f"{path}[{safe_repr(k)}]", depth + 1)
        if not items_e and not items_a:
            self.add(row(path, self.call, True, "empty mapping", dtype=type_name(e)))

    def _ndarray(self, e: Any, a: Any, path: str) -> None:
        try:
            te, ta = torch.from_numpy(e), torch.from_numpy(a)
        except BaseException as exc:  # noqa: BLE001 - object arrays have no tensor form
            verdict = eq_verdict(e, a)
            if isinstance(verdict, bool):
                self.add(row(path, self.call, verdict, "" if verdict else "numpy arrays differ"))
            else:
                self.add(not_compared(path, self.call, f"a numpy array torch cannot read ({describe_exc(exc)})"))
            return
        entry = compare_tensors(path, te, ta, self.call, self.override)
        self.add(replace(entry, dtype=f"numpy {entry.dtype}"))

    def _object(self, e: Any, a: Any, path: str, depth: int) -> None:
        """Anything else: its own == when that gives a bool, else its attributes side by side."""
        if isinstance(e, (types.FunctionType, types.MethodType, types.BuiltinFunctionType)):
            self.add(not_compared(path, self.call, f"a function ({safe_repr(e)})", dtype=type_name(e)))
            return
        identity_eq = getattr(type(e), "__eq__", None) is object.__eq__
        verdict: bool | str = "" if identity_eq else eq_verdict(e, a)
        if isinstance(verdict, bool):
            note = "" if verdict else f"{safe_repr(a)} != eager {safe_repr(e)}"
            self.add(row(path, self.call, verdict, note, dtype=type_name(e)))
            return
        # Default == is identity, which two runs can never share; or == could not answer.
        attrs_e, attrs_a = attributes(e), attributes(a)
        if attrs_e is None or attrs_a is None:
            why = verdict or f"{type_name(e)} objects: no attributes to compare, and == is identity"
            self.add(not_compared(path, self.call, why, dtype=type_name(e)))
            return
        self._pairs(list(attrs_e.items()), list(attrs_a.items()), path, depth, "attributes")


def compare_values(
    expected: Any, actual: Any, call: int, override: dict[str, float] | None, root: str = "out"
) -> list[Comparison]:
    """One entry per leaf of the eager output, walked side by side with the compiled one.

    A difference in structure (keys, lengths, fields, types) is a failing entry at the path
    where it occurs; a value that cannot be compared is an entry with compared=False and a
    note. Never raises, whatever the snippet returned."""
    walk = _Walk(call, override)
    walk.visit(expected, actual, root)
    return walk.finish(root)
