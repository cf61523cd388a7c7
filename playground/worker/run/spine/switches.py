"""Torch's own switches for one run: config keys, the stance, error_on_graph_break. Runs inside
the worker (imports torch); the torch-free side only checks their shape (playground.engine.settings).

The keys are checked here against torch's real config modules, so a key this torch does not
have, or a value of the wrong type, is a `settings` error naming it, never a silent no-op. The
run happens in a forked child that is thrown away afterwards, so nothing set here can leak into
the next run; the context managers still undo it, for the worker's own warm-up runs.
"""

from __future__ import annotations

import contextlib
import types
import typing
from collections.abc import Iterator
from typing import Any

import torch

from playground.engine.hello import ConfigKey
from playground.engine.settings import Settings
from playground.worker import compat
from playground.worker.run.spine import decomp_table

#: The config module behind each prefix of a settings key (private names: compat).
_MODULES = compat.CONFIG_MODULES


class SwitchError(ValueError):
    """A switch this torch does not take; the message names the key and what it accepts."""


def _module(prefix: str) -> Any:
    import importlib

    return importlib.import_module(_MODULES[prefix])


def _entries(prefix: str) -> dict[str, Any]:
    # ConfigModule keeps one _ConfigEntry per key (nested ones dotted: "cpp.simdlen").
    return dict(getattr(_module(prefix), "_config", {}))


def _allowed(entry: Any) -> tuple[tuple[type, ...], tuple[Any, ...] | None]:
    """(types a value may have, the Literal's values or None) for a config entry."""
    hint = getattr(entry, "value_type", None)
    default = getattr(entry, "default", None)
    if isinstance(hint, type):
        return (hint,), None
    origin = typing.get_origin(hint)
    if origin is typing.Literal:
        return (), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        out = []
        for arg in typing.get_args(hint):
            arg_origin = typing.get_origin(arg)
            if isinstance(arg, type):
                out.append(arg)
            elif isinstance(arg_origin, type):
                out.append(arg_origin)  # list[str] -> list
        return tuple(out), None
    if isinstance(origin, type):
        return (origin,), None
    # A hint we cannot read (a string, a callable type): the default's type, if it has one.
    return ((type(default),) if default is not None else ()), None


def _coerce(key: str, value: Any, entry: Any) -> Any:
    """`value` as the config takes it, or SwitchError. bool is never an int here (True is not
    a recompile limit), an int is a float, a list is a tuple or list as the key wants."""
    kinds, literal = _allowed(entry)
    if literal is not None:
        if value in literal and type(value) in {type(v) for v in literal}:
            return value
        raise SwitchError(f"config {key} is {value!r}; allowed: {', '.join(repr(v) for v in literal)}")
    if not kinds:
        return value
    for kind in kinds:
        if kind is bool and isinstance(value, bool):
            return value
        if kind is int and isinstance(value, int) and not isinstance(value, bool):
            return value
        if kind is float and isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if kind is str and isinstance(value, str):
            return value
        if kind is type(None) and value is None:
            return None
        if kind in (list, tuple, set) and isinstance(value, (list, tuple)):
            return kind(value)
    names = " or ".join("None" if k is type(None) else k.__name__ for k in kinds)
    raise SwitchError(f"config {key} is {value!r} ({type(value).__name__}); it takes {names}")


def checked_config(pairs: Any) -> list[tuple[str, str, Any]]:
    """(prefix, name, value) for each settings config pair, checked against this torch's
    config modules; SwitchError for the first unknown key or wrong type."""
    out = []
    items = pairs.items() if isinstance(pairs, dict) else pairs or ()
    for key, value in items:
        prefix, _, name = str(key).partition(".")
        if str(key) == decomp_table.KEY:
            try:
                out.append((prefix, name, decomp_table.check(value)))
            except decomp_table.BadOpName as exc:
                raise SwitchError(str(exc)) from None
            continue
        if prefix not in _MODULES or not name:
            raise SwitchError(f"config key {key!r} must start with dynamo. or inductor. (or be {decomp_table.KEY})")
        entries = _entries(prefix)
        if name not in entries:
            import difflib

            close = difflib.get_close_matches(name, list(entries), n=1)
            hint = f" (did you mean {prefix}.{close[0]}?)" if close else ""
            raise SwitchError(f"torch {torch.__version__} has no config key {key}{hint}")
        value = _coerce(str(key), value, entries[name])
        if (prefix, name) == ("dynamo", "reorderable_logging_functions"):
            value = _callables(str(key), value)
        out.append((prefix, name, value))
    return out


def _callables(key: str, names: Any) -> set[Any]:
    """A config that holds functions (torch's reorderable_logging_functions), named as the
    settings can spell them: a builtin ("print") or "module.attr" ("logging.info")."""
    import builtins
    import importlib

    found = set()
    for name in names:
        if not isinstance(name, str):
            raise SwitchError(f'config {key} takes function names ("print", "logging.info"); got {name!r}')
        module, _, attr = name.rpartition(".")
        try:
            found.add(getattr(importlib.import_module(module) if module else builtins, attr))
        except (ImportError, AttributeError, ValueError):
            raise SwitchError(f"config {key}: no function {name!r}") from None
    return found


def problem(settings: Settings) -> str | None:
    """Why these switches cannot be applied on this torch, or None."""
    try:
        checked_config(dict(settings.config))
    except SwitchError as exc:
        return str(exc)
    return None


@contextlib.contextmanager
def applied(settings: Settings) -> Iterator[None]:
    """The run's config keys, stance and error_on_graph_break in force for its duration; ours
    (decomp_table.KEY) read by the compiles, which take the ops out of Inductor's table."""
    with contextlib.ExitStack() as stack:
        config = checked_config(dict(settings.config))
        removed = next((value for prefix, name, value in config if f"{prefix}.{name}" == decomp_table.KEY), ())
        stack.enter_context(decomp_table.in_force(removed))
        for prefix, name, value in config:
            if f"{prefix}.{name}" != decomp_table.KEY:
                stack.enter_context(_module(prefix).patch({name: value}))
        stance = settings.stance
        if stance != "default":
            stack.enter_context(torch.compiler.set_stance(stance))
        if settings.error_on_graph_break:
            stack.enter_context(compat.error_on_graph_break())
        yield


def catalog() -> tuple[ConfigKey, ...]:
    """Every config key this torch has, with its type and default: what the app's command
    palette can offer (the worker's hello carries it). Hidden and deprecated keys left out."""
    out = []
    for prefix in _MODULES:
        for name, entry in sorted(_entries(prefix).items()):
            if getattr(entry, "hide", False) or getattr(entry, "deprecated", False) or name.startswith("_"):
                continue
            default = getattr(entry, "default", None)
            if not (default is None or isinstance(default, (bool, int, float, str))):
                continue  # lists, dicts and callables are not set from a palette
            kinds, literal = _allowed(entry)
            kind = "literal" if literal is not None else "|".join(k.__name__ for k in kinds) or "any"
            out.append(ConfigKey(name=f"{prefix}.{name}", type=kind, default=default))
    return tuple(out)
