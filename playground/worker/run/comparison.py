"""Eager against compiled: every output leaf and every gradient, with dtype-aware tolerances.

The tolerances follow torch.testing.assert_close's defaults per dtype; a snippet's TOLERANCE
overrides them for every floating dtype. Worker-side (imports torch).

The outputs are the user's objects: anything may come back (dataclasses, namedtuples, sparse
tensors, generators, objects whose `==`, `bool()` or `repr()` raise). The comparator walks both
values side by side and never raises: a difference of structure, type, shape, dtype or layout
is a mismatch entry whose `name` is the path to it; a value it cannot compare (a generator, a
meta tensor) is an entry with `compared: false` and a note saying why, and is not a mismatch.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import numbers
import reprlib
import sys
import types
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

import torch

from playground.engine.report import Comparison

#: (rtol, atol) as torch.testing.assert_close uses them.
DEFAULT_TOLERANCES: dict[torch.dtype, tuple[float, float]] = {
    torch.float16: (1e-3, 1e-5),
    torch.bfloat16: (1.6e-2, 1e-5),
    torch.float32: (1.3e-6, 1e-5),
    torch.float64: (1e-7, 1e-7),
    torch.complex64: (1.3e-6, 1e-5),
    torch.complex128: (1e-7, 1e-7),
}

#: Deeper than this (or a container that holds itself) is not walked further.
MAX_DEPTH = 32
#: Entries listed per compared value; the rest are summed up in one entry, so a snippet that
#: returns a list of a million floats does not produce a report of a million lines.
MAX_LISTED = 200
#: Longest note; notes quote the user's values.
MAX_NOTE = 200

_repr = reprlib.Repr()
_repr.maxstring = 60
_repr.maxother = 60
_repr.maxlist = _repr.maxtuple = _repr.maxdict = _repr.maxset = 6


# --- small helpers that must never raise -----------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Unsent:
    """Stands for a value the eager reference could not send across processes (pickle refused
    it: a generator, a lambda, a class made per call): not compared, and said so."""

    type_name: str
    why: str


def _printable(text: str) -> str:
    """Control characters escaped: notes reach terminals, and the snippet chose the text."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _type_name(value: Any) -> str:
    try:
        return str(type(value).__name__)
    except BaseException:  # noqa: BLE001 - a metaclass may do anything
        return "object"


def safe_repr(value: Any) -> str:
    """A short repr that survives a raising or hostile __repr__."""
    try:
        text = _repr.repr(value)
        if not isinstance(text, str):
            raise TypeError("__repr__ returned a non-string")
    except BaseException as exc:  # noqa: BLE001 - the user's __repr__ may raise anything
        text = f"<{_type_name(value)} object; repr() raised {_type_name(exc)}>"
    return _printable(text)


def describe_exc(exc: BaseException) -> str:
    try:
        message = str(exc)
    except BaseException:  # noqa: BLE001 - an exception whose __str__ raises
        message = ""
    message = _printable(message.splitlines()[0] if message else "")
    return f"{_type_name(exc)}: {message}" if message else _type_name(exc)


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _dtype_name(dtype: Any) -> str:
    return str(dtype).replace("torch.", "")


def row(name: str, call: int, ok: bool, note: str = "", **fields: Any) -> Comparison:
    """One report row (its note cut to MAX_NOTE); `fields`: Comparison's other fields."""
    return Comparison(name=name, call=call, ok=ok, note=note[:MAX_NOTE], **fields)


def _not_compared(name: str, call: int, why: str, **fields: Any) -> Comparison:
    # Not a mismatch: we could not look, and say so. Counting it as a failure would fail a
    # CI job (--fail-on-mismatch) on something torch.compile did not get wrong.
    return row(name, call, True, f"not compared: {why}", compared=False, **fields)


# --- tolerances ------------------------------------------------------------------------------


def tolerance_for(dtype: torch.dtype, override: dict[str, float] | None) -> tuple[float, float]:
    """(rtol, atol) for a dtype; exact (0, 0) for integer and bool tensors.

    An override value that is not a finite number >= 0 is ignored here (validate_tolerance
    names it for the report), so a bad TOLERANCE can never crash the comparison."""
    if not (dtype.is_floating_point or dtype.is_complex):
        return (0.0, 0.0)
    rtol, atol = DEFAULT_TOLERANCES.get(dtype, (1.3e-6, 1e-5))
    if override:
        rtol = _tolerance_value(override.get("rtol"), rtol)
        atol = _tolerance_value(override.get("atol"), atol)
    return rtol, atol


def _tolerance_value(value: Any, default: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return default
    value = float(value)
    return value if math.isfinite(value) and value >= 0 else default


def validate_tolerance(value: Any) -> tuple[dict[str, float] | None, list[str]]:
    """The snippet's TOLERANCE, checked: (usable override or None, notes naming each problem)."""
    if value is None:
        return None, []
    if not isinstance(value, dict):
        return None, [f"TOLERANCE ignored: it must be a dict with atol and/or rtol, not {_type_name(value)}"]
    notes: list[str] = []
    clean: dict[str, float] = {}
    for key, item in value.items():
        if key not in ("atol", "rtol"):
            notes.append(f"TOLERANCE key {safe_repr(key)} ignored: only atol and rtol are read")
        elif _tolerance_value(item, -1.0) < 0:
            notes.append(f"TOLERANCE {key}={safe_repr(item)} ignored: it must be a finite number >= 0")
        else:
            clean[key] = float(item)
    return (clean or None), notes


# --- walking nested values -------------------------------------------------------------------


def _is_namedtuple(value: Any) -> bool:
    return isinstance(value, tuple) and isinstance(getattr(type(value), "_fields", None), tuple)


def _is_dataclass_instance(value: Any) -> bool:
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


def _fields(value: Any) -> list[tuple[str, Any]]:
    """(name, value) of a dataclass's or namedtuple's fields; an unset field is skipped."""
    if _is_namedtuple(value):
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


def _field_path(path: str, name: str) -> str:
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
        elif _is_namedtuple(value) or _is_dataclass_instance(value):
            children = [(_field_path(path, name), item) for name, item in _fields(value)]
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


# --- tensors ---------------------------------------------------------------------------------


def _layout_name(t: torch.Tensor) -> str:
    if t.is_nested:
        return "nested"
    return _dtype_name(t.layout).lstrip("_")


def plain(t: torch.Tensor) -> torch.Tensor:
    """A dense, strided CPU copy without autograd: what the arithmetic below can work on."""
    t = t.detach()
    if t.is_quantized:
        t = t.dequantize()
    if t.layout != torch.strided:  # sparse COO/CSR/CSC/BSR/BSC, mkldnn
        t = t.to_dense()
    return t.to("cpu").resolve_conj().resolve_neg()


def _nested_flat(e: torch.Tensor, a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor] | str:
    """Both nested tensors as flat dense tensors, or why they differ in structure."""
    ec, ac = e.unbind(), a.unbind()
    if len(ec) != len(ac):
        return f"nested tensor of {len(ac)} components != eager {len(ec)}"
    for i, (x, y) in enumerate(zip(ec, ac)):
        if x.shape != y.shape:
            return f"component {i} shape {tuple(y.shape)} != eager {tuple(x.shape)}"
    if not ec:
        return torch.zeros(0, dtype=e.dtype), torch.zeros(0, dtype=a.dtype)
    flat = [torch.cat([plain(c).reshape(-1) for c in comps]) for comps in (ec, ac)]
    return flat[0], flat[1]


def compare_tensors(
    name: str, expected: torch.Tensor, actual: torch.Tensor, call: int, override: dict[str, float] | None
) -> Comparison:
    """One entry for a tensor leaf. Never raises: a tensor it cannot read is 'not compared'."""
    try:
        return _compare_tensors(name, expected, actual, call, override)
    except BaseException as exc:  # noqa: BLE001 - subclasses and exotic layouts may refuse anything
        return _not_compared(name, call, f"reading the tensors raised {describe_exc(exc)}")


def _compare_tensors(
    name: str, expected: torch.Tensor, actual: torch.Tensor, call: int, override: dict[str, float] | None
) -> Comparison:
    entry = row(name, call, False, dtype=_dtype_name(expected.dtype))
    if expected.is_nested != actual.is_nested:
        return replace(entry, note=f"layout {_layout_name(actual)} != eager {_layout_name(expected)}")
    if not expected.is_nested and expected.shape != actual.shape:
        return replace(entry, note=f"shape {tuple(actual.shape)} != eager {tuple(expected.shape)}")
    # Differences that still leave values worth measuring: reported, and the leaf fails.
    problems = []
    if expected.dtype != actual.dtype:
        problems.append(f"dtype {_dtype_name(actual.dtype)} != eager {_dtype_name(expected.dtype)}")
    if _layout_name(expected) != _layout_name(actual):
        problems.append(f"layout {_layout_name(actual)} != eager {_layout_name(expected)}")
    if expected.device.type != actual.device.type:
        problems.append(f"device {actual.device} != eager {expected.device}")
    if expected.is_meta or actual.is_meta:
        note = "; ".join([*problems, "not compared: a meta tensor holds no values"])
        return replace(entry, compared=False, ok=not problems, note=note)
    if expected.is_nested:
        flat = _nested_flat(expected, actual)
        if isinstance(flat, str):
            return replace(entry, note=flat)
        e, a = flat
    else:
        e, a = plain(expected), plain(actual)
    entry = _measure(entry, e, a, override)
    if problems:
        note = "; ".join([*problems, entry.note] if entry.note else problems)[:MAX_NOTE]
        entry = replace(entry, ok=False, note=note)
    return entry


def _measure(entry: Comparison, e: torch.Tensor, a: torch.Tensor, override: dict[str, float] | None) -> Comparison:
    """`entry` with max_abs, max_rel and ok for two dense CPU tensors of the same shape."""
    e_float = e.dtype.is_floating_point or e.dtype.is_complex
    a_float = a.dtype.is_floating_point or a.dtype.is_complex
    rtol, atol = tolerance_for(e.dtype if e_float else a.dtype, override)
    entry = replace(entry, rtol=rtol, atol=atol)
    if e.numel() == 0:
        return replace(entry, max_abs=0.0, max_rel=0.0, ok=True)
    wide = torch.complex128 if (e.dtype.is_complex or a.dtype.is_complex) else torch.float64
    e64, a64 = e.to(wide), a.to(wide)
    both_nan = torch.isnan(e64) & torch.isnan(a64)
    same_inf = torch.isinf(e64) & (e64 == a64)
    diff = (e64 - a64).abs()
    diff = torch.where(both_nan | same_inf, torch.zeros_like(diff), diff)
    mag = e64.abs()
    rel = torch.where(mag > 0, diff / mag.clamp_min(torch.finfo(torch.float64).tiny), diff * 0)
    # nan_to_num's default turns inf into the largest float: keep it infinite, so _finite says None.
    entry = replace(
        entry,
        max_abs=_finite(float(torch.nan_to_num(diff, nan=math.inf, posinf=math.inf).max())),
        max_rel=_finite(float(torch.nan_to_num(rel, nan=math.inf, posinf=math.inf).max())),
    )
    if not (e_float or a_float):
        # Integers and bools are exact; int64 beyond 2**53 rounds in float64, so compare as int64.
        return replace(entry, ok=bool(torch.equal(e.to(torch.int64), a.to(torch.int64))))
    # An infinity on one side only: atol + rtol * inf would let any value pass, so say it plainly.
    lone_inf = (torch.isinf(e64) | torch.isinf(a64)) & ~same_inf
    bad = (diff > atol + rtol * mag) | (torch.isnan(diff) & ~both_nan) | lone_inf
    entry = replace(entry, ok=not bool(bad.any()))
    if bool((torch.isnan(e64) ^ torch.isnan(a64)).any()):
        return replace(entry, note="NaN in one side only")
    if bool(lone_inf.any()):
        return replace(entry, note=f"inf against a different value in {int(lone_inf.sum())} element(s)")
    if bool(both_nan.any()):
        return replace(entry, note=f"NaN on both sides in {int(both_nan.sum())} element(s), counted equal")
    return entry


# --- Python values ---------------------------------------------------------------------------


def _number_diff(e: float, a: float, rtol: float, atol: float) -> tuple[bool, float | None, float | None]:
    """(ok, |e - a|, relative) for two floats; NaN equals NaN, inf equals the same inf."""
    if math.isnan(e) or math.isnan(a):
        return math.isnan(e) and math.isnan(a), None, None
    if e == a:
        return True, 0.0, 0.0
    diff = abs(e - a)
    rel = diff / abs(e) if e != 0 else None
    ok = math.isfinite(diff) and diff <= atol + rtol * abs(e)
    return ok, _finite(diff), None if rel is None else _finite(rel)


def _as_pairs(e: Any, a: Any) -> list[tuple[float, float]] | None:
    """Two numbers as (eager, compiled) float pairs (two for complex), or None if they will not convert."""
    try:
        if isinstance(e, numbers.Real):
            return [(float(e), float(a))]
        ce, ca = complex(e), complex(a)
        return [(ce.real, ca.real), (ce.imag, ca.imag)]
    except BaseException:  # noqa: BLE001 - a Number subclass without __float__/__complex__
        return None


def _compare_number(path: str, e: Any, a: Any, call: int, override: dict[str, float] | None) -> Comparison | None:
    """int/bool exactly; float and complex within float64 tolerances, NaN equal to NaN."""
    kind = _type_name(e)
    if isinstance(e, numbers.Integral):
        ok = int(e) == int(a)
        diff = abs(int(e) - int(a))
        max_abs = float(diff) if diff < 2**1000 else None
        note = "" if ok else f"{safe_repr(a)} != eager {safe_repr(e)}"
        return row(path, call, ok, note, dtype=kind, max_abs=max_abs, max_rel=0.0 if ok else None)
    pairs = _as_pairs(e, a)
    if pairs is None:
        return None
    rtol, atol = tolerance_for(torch.float64, override)
    results = [_number_diff(x, y, rtol, atol) for x, y in pairs]
    ok = all(r[0] for r in results)
    abs_parts = [r[1] for r in results]
    max_abs = None if None in abs_parts else max(abs_parts)  # type: ignore[type-var]
    rel_parts = [r[2] for r in results]
    max_rel = None if None in rel_parts else max(rel_parts)  # type: ignore[type-var]
    note = "" if ok else f"{safe_repr(a)} != eager {safe_repr(e)}"
    if ok and any(math.isnan(x) for x, _ in pairs):
        note = "NaN on both sides, counted equal"
    return row(path, call, ok, note, dtype=kind, max_abs=max_abs, max_rel=max_rel, atol=atol, rtol=rtol)


def _eq_verdict(e: Any, a: Any) -> bool | str:
    """e == a as a bool, or why the objects' own equality could not say."""
    try:
        result = e == a
    except BaseException as exc:  # noqa: BLE001 - the user's __eq__ may raise anything
        return f"{_type_name(e)}.__eq__ raised {describe_exc(exc)}"
    if isinstance(result, bool):
        return result
    if isinstance(result, torch.Tensor):
        return f"{_type_name(e)}.__eq__ returned a tensor, not a bool"
    try:
        return bool(result)
    except BaseException as exc:  # noqa: BLE001 - numpy arrays and the like refuse bool()
        return f"{_type_name(e)}.__eq__ returned a {_type_name(result)} whose bool() raised {describe_exc(exc)}"


def _attributes(value: Any) -> dict[str, Any] | None:
    """An object's instance attributes (__dict__ and __slots__), or None when it has none to read."""
    found: dict[str, Any] = {}
    has_state = False
    try:
        state = object.__getattribute__(value, "__dict__")
        if isinstance(state, dict):
            found.update(state)
            has_state = True
    except BaseException:  # noqa: BLE001 - no __dict__, or a hostile descriptor
        pass
    for cls in type(value).__mro__:
        has_state = has_state or ("__slots__" in cls.__dict__ and cls is not object)
        slots = cls.__dict__.get("__slots__", ())
        for slot in [slots] if isinstance(slots, str) else slots:
            if slot in ("__dict__", "__weakref__") or slot in found:
                continue
            try:
                found[slot] = object.__getattribute__(value, slot)
            except BaseException:  # noqa: BLE001 - an unset slot
                continue
    return found if has_state else None


def _iterator_kind(value: Any) -> str | None:
    if inspect.isgenerator(value):
        return "a generator"
    if inspect.iscoroutine(value):
        return "a coroutine"
    if inspect.isasyncgen(value):
        return "an async generator"
    if isinstance(value, Iterator):
        return f"an iterator ({_type_name(value)})"
    return None


def _is_tensor(value: Any) -> bool:
    # isinstance() consults a __class__ property, which a snippet's object may make raise.
    return issubclass(type(value), torch.Tensor)


def _is_ndarray(value: Any) -> bool:
    # Look numpy up rather than import it: a snippet that never imported it returns no arrays.
    np = sys.modules.get("numpy")
    return np is not None and isinstance(value, np.ndarray)


# --- the walk --------------------------------------------------------------------------------


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
            self.add(_not_compared(path, self.call, f"comparing raised {describe_exc(exc)}"))

    def _visit(self, e: Any, a: Any, path: str, depth: int) -> None:
        if type(e) is Unsent:
            # An iterator is not compared wherever it comes from (consuming it would run code).
            why = (
                _iterator_kind(a)
                or f"the eager reference's {e.type_name} could not be sent between processes ({e.why})"
            )
            self.add(_not_compared(path, self.call, why, dtype=e.type_name))
            return
        if _is_tensor(e) or _is_tensor(a):
            self._tensors(e, a, path)
            return
        kind = _iterator_kind(e)
        if kind is not None and _iterator_kind(a) is not None:
            # Consuming them would run the snippet's code outside the compared call (torch.compile
            # of a generator function compiles nothing: the body runs lazily when iterated).
            self.add(_not_compared(path, self.call, kind, dtype=_type_name(e)))
            return
        if type(e) is not type(a):
            self.mismatch(path, f"type {_type_name(a)} != eager {_type_name(e)}", dtype=_type_name(e))
            return
        if e is a:
            self.add(row(path, self.call, True, dtype=_type_name(e)))
            return
        if depth >= MAX_DEPTH:
            self.add(_not_compared(path, self.call, f"nested deeper than {MAX_DEPTH} levels"))
            return
        key = (id(e), id(a))
        if key in self.active:
            self.add(_not_compared(path, self.call, "the value contains itself"))
            return
        self.active.add(key)
        try:
            self._value(e, a, path, depth)
        finally:
            self.active.discard(key)

    def _tensors(self, e: Any, a: Any, path: str) -> None:
        if _is_tensor(e) and _is_tensor(a):
            self.add(compare_tensors(path, e, a, self.call, self.override))
        else:
            other = _type_name(e) if _is_tensor(a) else _type_name(a)
            side = "compiled" if _is_tensor(a) else "eager"
            self.mismatch(path, f"tensor in {side} only; the other side gave {other}")

    def _value(self, e: Any, a: Any, path: str, depth: int) -> None:
        """Same type on both sides, not identical: walk containers, compare everything else."""
        if _is_namedtuple(e) or _is_dataclass_instance(e):
            self._pairs(_fields(e), _fields(a), path, depth, "fields")
        elif isinstance(e, Mapping):
            self._mapping(e, a, path, depth)
        elif isinstance(e, (list, tuple)):
            items_e, items_a = list(e), list(a)
            if len(items_e) != len(items_a):
                self.mismatch(path, f"length {len(items_a)} != eager {len(items_e)}", dtype=_type_name(e))
            elif not items_e:
                self.add(row(path, self.call, True, "no items", dtype=_type_name(e)))
            for i, (x, y) in enumerate(zip(items_e, items_a)):
                self.visit(x, y, f"{path}[{i}]", depth + 1)
        elif isinstance(e, numbers.Number) and (entry := _compare_number(path, e, a, self.call, self.override)):
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
                self.visit(item, by_name[name], _field_path(path, name), depth + 1)
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
                dtype=_type_name(e),
            )
        for k, item in items_e:
            if k in a:
                self.visit(item, a[k], f"{path}[{safe_repr(k)}]", depth + 1)
        if not items_e and not items_a:
            self.add(row(path, self.call, True, "empty mapping", dtype=_type_name(e)))

    def _ndarray(self, e: Any, a: Any, path: str) -> None:
        try:
            te, ta = torch.from_numpy(e), torch.from_numpy(a)
        except BaseException as exc:  # noqa: BLE001 - object arrays have no tensor form
            verdict = _eq_verdict(e, a)
            if isinstance(verdict, bool):
                self.add(row(path, self.call, verdict, "" if verdict else "numpy arrays differ"))
            else:
                self.add(_not_compared(path, self.call, f"a numpy array torch cannot read ({describe_exc(exc)})"))
            return
        entry = compare_tensors(path, te, ta, self.call, self.override)
        self.add(replace(entry, dtype=f"numpy {entry.dtype}"))

    def _object(self, e: Any, a: Any, path: str, depth: int) -> None:
        """Anything else: its own == when that gives a bool, else its attributes side by side."""
        if isinstance(e, (types.FunctionType, types.MethodType, types.BuiltinFunctionType)):
            self.add(_not_compared(path, self.call, f"a function ({safe_repr(e)})", dtype=_type_name(e)))
            return
        identity_eq = getattr(type(e), "__eq__", None) is object.__eq__
        verdict: bool | str = "" if identity_eq else _eq_verdict(e, a)
        if isinstance(verdict, bool):
            note = "" if verdict else f"{safe_repr(a)} != eager {safe_repr(e)}"
            self.add(row(path, self.call, verdict, note, dtype=_type_name(e)))
            return
        # Default == is identity, which two runs can never share; or == could not answer.
        attrs_e, attrs_a = _attributes(e), _attributes(a)
        if attrs_e is None or attrs_a is None:
            why = verdict or f"{_type_name(e)} objects: no attributes to compare, and == is identity"
            self.add(_not_compared(path, self.call, why, dtype=_type_name(e)))
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


# --- gradients -------------------------------------------------------------------------------


def _loss_part(leaf: torch.Tensor) -> torch.Tensor:
    if leaf.is_nested:
        return torch.cat([c.reshape(-1) for c in leaf.unbind()]).sum()
    try:
        return leaf.sum()
    except Exception:  # noqa: BLE001 - some sparse layouts have no sum(); densify
        return leaf.to_dense().sum()


def default_loss(output: Any, notes: list[str] | None = None) -> torch.Tensor | None:
    """The contract's default loss: the sum of every floating-point tensor in the output that
    requires grad, dataclass fields and namedtuple items included. A leaf that cannot be summed
    is left out and named in `notes` when given."""
    total = None
    for path, leaf in leaves(output):
        if not (_is_tensor(leaf) and leaf.is_floating_point() and leaf.requires_grad):
            continue
        try:
            part = _loss_part(leaf)
            total = part if total is None else total + part.to(total.device)
        except Exception as exc:  # noqa: BLE001 - an exotic tensor must not end the gradient check
            if notes is not None:
                notes.append(f"default loss left out {path}: {describe_exc(exc)}")
    return total


def _param_names(modules: list[tuple[str, torch.nn.Module]]) -> list[tuple[str, torch.Tensor]]:
    """(name, parameter) of the snippet's modules: the target's by its own names ("weight"),
    the others' by the name the snippet gave the module ("net.weight")."""
    found: list[tuple[str, torch.Tensor]] = []
    seen: set[int] = set()
    for i, (prefix, module) in enumerate(modules):
        for name, param in module.named_parameters():
            if id(param) in seen:
                continue
            seen.add(id(param))
            found.append((name if i == 0 and prefix in ("model", "fn") else f"{prefix}.{name}", param))
    return found


def grad_leaves(args: tuple[Any, ...], modules: list[tuple[str, torch.nn.Module]]) -> list[torch.Tensor]:
    """Every tensor whose .grad a backward can write: the inputs that require grad, the parameters."""
    found = [leaf for _, leaf in leaves(args, "input") if _is_tensor(leaf) and leaf.requires_grad]
    return found + [p for _, p in _param_names(modules)]


def collect_grads(args: tuple[Any, ...], modules: list[tuple[str, torch.nn.Module]]) -> dict[str, torch.Tensor | None]:
    """Gradients of every input that requires grad (by position) and every parameter (by name)."""
    grads: dict[str, torch.Tensor | None] = {}
    for path, leaf in leaves(args, "input"):
        if _is_tensor(leaf) and leaf.requires_grad:
            grads[path] = None if leaf.grad is None else leaf.grad.detach().clone()
    for name, param in _param_names(modules):
        if param.requires_grad:
            grads[name] = None if param.grad is None else param.grad.detach().clone()
    return grads


def compare_grads(
    eager: dict[str, torch.Tensor | None],
    compiled: dict[str, torch.Tensor | None],
    call: int,
    override: dict[str, float] | None,
) -> list[Comparison]:
    """One entry per gradient; a gradient on one side only is a mismatch."""
    results = []
    for name in [*eager, *(n for n in compiled if n not in eager)]:
        e, a = eager.get(name), compiled.get(name)
        label = f"{name}.grad"
        if e is None and a is None:
            continue
        if e is None or a is None:
            note = "gradient missing in " + ("eager" if e is None else "compiled")
            results.append(row(label, call, False, note))
            continue
        results.append(compare_tensors(label, e, a, call, override))
    return results
