"""The wire codec of the report: one `to_dict`/`from_dict` for every report class.

Each report class is a frozen dataclass whose fields are declared in the order the JSON object
lists its keys, so `to_dict` reproduces torch-free, byte for byte, what the worker has always
written (tests/engine/test_report_wire.py pins it on every fixture). Field metadata, set with
`wire(...)`, covers the few places where the JSON is not the field list: another key name
(`pass`), a key that is absent rather than empty, a nested group flattened into the top level,
a mapping kept as pairs, and old spellings still read from canned reports.
"""

from __future__ import annotations

import functools
import os
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import MISSING, Field, field, fields
from types import MappingProxyType
from typing import Any

from playground.engine.settings import Settings

_WIRE = "wire"


def wire(
    default: Any = None,
    *,
    key: str = "",
    omit: Callable[[Any], bool] | None = None,
    flatten: bool = False,
    pairs: bool = False,
    aliases: tuple[str, ...] = (),
    factory: Callable[[], Any] | None = None,
) -> Any:
    """A dataclass field with wire metadata. `omit(obj)` leaves the key out for that object."""
    meta = {_WIRE: {"key": key, "omit": omit, "flatten": flatten, "pairs": pairs, "aliases": aliases}}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


def _meta(f: Field[Any]) -> dict[str, Any]:
    return f.metadata.get(_WIRE) or {"key": "", "omit": None, "flatten": False, "pairs": False, "aliases": ()}


@functools.cache
def _plan(cls: type) -> tuple[tuple[Field[Any], dict[str, Any], Any], ...]:
    hints = typing.get_type_hints(cls)
    return tuple((f, _meta(f), hints[f.name]) for f in fields(cls) if f.init)


def _freeze(value: Any) -> Any:
    """JSON containers as immutable values: lists become tuples, objects read-only mappings."""
    if isinstance(value, dict):
        return MappingProxyType({k: _freeze(v) for k, v in value.items()})
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value


def _thaw(value: Any) -> Any:
    if isinstance(value, Wire):
        return value.to_dict()
    if isinstance(value, Settings):
        return value.to_dict()
    if isinstance(value, Mapping):
        return {k: _thaw(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return [_thaw(v) for v in value]
    return value


#: Set to "1", every `from_dict` in this process and the processes it starts refuses a value of
#: the wrong type instead of reading it as the field's default (the test suite sets it, so that
#: a builder's mistake fails a test rather than vanish into a default). Unset, reading stays
#: lenient: a canned report from an older version, or a line nobody should have written, still
#: loads.
STRICT_ENV = "COMPILE_PLAYGROUND_STRICT_REPORTS"


class WireTypeError(TypeError):
    """A report's key holds a value of another type than its field's (strict reading only)."""


def strict_by_default() -> bool:
    """Whether `from_dict` is strict when not told (STRICT_ENV)."""
    return os.environ.get(STRICT_ENV) == "1"


def _fits(hint: Any, value: Any) -> bool:
    """Whether a (non-null) JSON value has the field's type: what strict reading requires."""
    origin = typing.get_origin(hint)
    if isinstance(hint, type) and (issubclass(hint, Wire) or hint is Settings):
        return isinstance(value, Mapping)
    if origin is tuple:
        return isinstance(value, (list, tuple))
    if hint is bool:
        return isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if origin is not None and isinstance(origin, type) and issubclass(origin, Mapping):
        return isinstance(value, Mapping)
    return True  # Any


def _read(hint: Any, value: Any, default: Any, strict: bool = False, where: str = "") -> Any:
    """One JSON value as the field's type; a missing or null value gives the default. `strict`:
    a value of another type is a WireTypeError rather than the default or a conversion."""
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (types.UnionType, typing.Union):
        if value is None:
            return None
        return _read(next(a for a in args if a is not type(None)), value, default, strict, where)
    if value is None:
        return default
    if isinstance(hint, type) and issubclass(hint, Wire) and isinstance(value, hint):
        return value  # built typed where the fact was first known: nothing to read
    if strict and not _fits(hint, value):
        raise WireTypeError(f"{where}: {type(value).__name__} {value!r:.80} is not {getattr(hint, '__name__', hint)}")
    if isinstance(hint, type) and issubclass(hint, Wire):
        return hint.from_dict(value, strict=strict)
    if hint is Settings:
        return Settings.from_dict(value)
    if origin is tuple and args and args[-1] is Ellipsis:
        items = value if isinstance(value, (list, tuple)) else ()
        return tuple(_read(args[0], v, None, strict, f"{where}[{i}]") for i, v in enumerate(items))
    if hint is float:
        # A phase time torch did not report reads as zero, never as a string in a sum.
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default
    if hint is bool:
        return bool(value)
    if hint is str:
        return value if isinstance(value, str) else str(value)
    return _freeze(value)


class Wire:
    """The codec shared by every report class: `to_dict` for the wire and the JSON output,
    `from_dict` for what comes back (a canned report may lack keys: they take the defaults)."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f, meta, _ in _plan(type(self)):
            value = getattr(self, f.name)
            if meta["omit"] is not None and meta["omit"](self):
                continue
            if meta["flatten"]:
                out.update(value.to_dict())
            elif meta["pairs"]:
                out[meta["key"] or f.name] = {k: v for k, v in value}
            else:
                out[meta["key"] or f.name] = _thaw(value)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, *, strict: bool | None = None) -> Any:
        """The value a JSON object holds; a missing key takes its field's default. Lenient
        unless `strict` (by default: STRICT_ENV), where a value of the wrong type raises
        WireTypeError."""
        if strict is None:
            strict = strict_by_default()
        data = data or {}
        values: dict[str, Any] = {}
        for f, meta, hint in _plan(cls):
            if meta["flatten"]:
                values[f.name] = hint.from_dict(data, strict=strict)
                continue
            raw = data.get(meta["key"] or f.name)
            for alias in meta["aliases"]:
                if raw is None or raw == "":
                    raw = data.get(alias)
            default = f.default if f.default is not MISSING else f.default_factory()  # type: ignore[misc]
            where = f"{cls.__name__}.{meta['key'] or f.name}"
            if meta["pairs"]:
                if strict and raw is not None and not isinstance(raw, Mapping):
                    raise WireTypeError(f"{where}: {type(raw).__name__} is not an object")
                pairs = raw.items() if isinstance(raw, Mapping) else ()
                values[f.name] = tuple((str(k), str(v)) for k, v in pairs) if pairs else default
            else:
                values[f.name] = _read(hint, raw, default, strict, where)
        return cls(**values)

    @classmethod
    def wire_keys(cls) -> frozenset[str]:
        """Every key this class reads (the test for unknown keys uses it)."""
        keys: set[str] = set()
        for f, meta, hint in _plan(cls):
            if meta["flatten"]:
                keys |= hint.wire_keys()
            else:
                keys.add(meta["key"] or f.name)
                keys.update(meta["aliases"])
        return frozenset(keys)


def absent_if_none(name: str) -> Callable[[Any], bool]:
    """A field's `omit`: its key is absent from the JSON while the value is None."""
    return lambda obj: getattr(obj, name) is None


def absent_if_empty(name: str) -> Callable[[Any], bool]:
    """A field's `omit`: its key is absent from the JSON while the value is empty."""
    return lambda obj: not getattr(obj, name)
