"""The toggles of one experiment, as a frozen value shared by the CLI, the app and the worker,
and the checks every value passes before it becomes one.

Torch-free on purpose: the UI process builds and cycles these without importing torch.

A key we do not know or a value of the wrong type is a `SettingsProblem` named with its line,
never skipped in silence: a misspelt key (`"fullgrpah": True`) would otherwise run the
experiment the user did not ask for. Where the values come from: the snippet's `SETTINGS`
(`playground.engine.snippet_settings`, which also layers them: `resolve_settings`), flags
(`playground.cli.flags`) and the app's keys.
"""

from __future__ import annotations

import ast
import difflib
import json
import math
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

#: Backends always offered; the worker adds whatever torch._dynamo.list_backends() reports.
CORE_BACKENDS: tuple[str, ...] = ("eager", "aot_eager", "inductor")
#: Inductor modes, None meaning torch.compile's default.
MODES: tuple[str | None, ...] = (
    None,
    "reduce-overhead",
    "max-autotune",
    "max-autotune-no-cudagraphs",
)
#: dynamic=None is torch's "auto": static first, automatic dynamic after a shape change.
DYNAMICS: tuple[bool | None, ...] = (None, True, False)
DEVICES: tuple[str, ...] = ("cpu", "cuda")
#: The most processes a run may join with torch.distributed (--ranks): each is a fork of the
#: worker with its own reference, so a laptop's or a workshop server's memory bounds it.
MAX_RANKS = 8
#: What the app's ranks key cycles through.
RANK_CHOICES: tuple[int, ...] = (1, 2, 4)
#: What a snippet that defines both `model` and `fn` runs; None is the contract's rule (model).
TARGETS: tuple[str | None, ...] = (None, "model", "fn")

#: A backend or mode name as torch spells them: no spaces, quotes or control characters.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}")

#: torch.compiler.set_stance's stances on torch 2.13 (tests/engine/test_config_settings.py
#: checks them against torch's own list); "default" is plain compilation.
STANCES: tuple[str, ...] = (
    "default",
    "force_eager",
    "eager_on_recompile",
    "fail_on_recompile",
    "eager_then_compile",
    "aot_eager_then_compile",
)
#: A config key as the settings spell it: "dynamo.<key>" for torch._dynamo.config and
#: "inductor.<key>" for torch._inductor.config (nested: "inductor.cpp.simdlen"), or one of
#: PLAYGROUND_CONFIG. Only the shape is checked here, torch-free; the worker checks the key and
#: the type against torch's modules.
CONFIG_KEY = re.compile(r"(dynamo|inductor)(\.[A-Za-z_][A-Za-z0-9_]{0,79}){1,3}|playground\.without_decompositions")
#: Config keys of ours, spelt as torch's are: switches no torch config has.
#: `playground.without_decompositions`: op names ("aten.sin.default") taken out of Inductor's
#: decomposition table before each compile (worker/run/spine/decomp_table.py).
PLAYGROUND_CONFIG: tuple[str, ...] = ("playground.without_decompositions",)
#: The long spellings a user may paste, folded to the short ones.
_CONFIG_PREFIXES = {"torch._dynamo.config.": "dynamo.", "torch._inductor.config.": "inductor."}
#: Config keys the command palette offers before the worker says which exist (the test checks
#: each against torch): the switches the docs and the troubleshooting guide point people to.
COMMON_CONFIG: tuple[str, ...] = (
    "dynamo.capture_scalar_outputs",
    "dynamo.capture_dynamic_output_shape_ops",
    "dynamo.recompile_limit",
    "dynamo.automatic_dynamic_shapes",
    "dynamo.assume_static_by_default",
    "dynamo.specialize_int",
    "dynamo.specialize_float",
    "dynamo.inline_inbuilt_nn_modules",
    "dynamo.optimize_ddp",
    "dynamo.enable_compiler_collectives",
    "inductor.max_autotune",
    "inductor.freezing",
    "inductor.fallback_random",
    "inductor.emulate_precision_casts",
    "inductor.cpp_wrapper",
)
#: A config value: a JSON literal. Lists are held as tuples so that Settings stays hashable.
ConfigValue = bool | int | float | str | None | tuple
Config = tuple[tuple[str, Any], ...]


def dynamic_name(value: bool | None) -> str:
    """The CLI spelling of a dynamic value: auto, true or false."""
    return "auto" if value is None else ("true" if value else "false")


def parse_dynamic(text: str | bool | None) -> bool | None:
    """The command line's spelling of dynamic (auto, true, false and synonyms); ValueError else."""
    if text is None or isinstance(text, bool):
        return text
    lowered = text.strip().lower()
    if lowered in ("auto", "none", "null", ""):
        return None
    if lowered in ("true", "1", "yes", "on"):
        return True
    if lowered in ("false", "0", "no", "off"):
        return False
    raise ValueError(f"dynamic must be auto, true or false, not {text!r}")


@dataclass(frozen=True)
class Settings:
    """What torch.compile is called with, plus where and how the run is measured."""

    fullgraph: bool = False
    dynamic: bool | None = None
    backend: str = "inductor"
    mode: str | None = None
    device: str = "cpu"
    #: Disable Inductor's FX-graph and AOT-autograd caches, which survive dynamo.reset(),
    #: so that compile_s is a true cold compile.
    cold: bool = False
    #: torch._dynamo.config / torch._inductor.config keys set for the run, as sorted
    #: ("dynamo.capture_scalar_outputs", True) pairs: a tuple, so that Settings stays hashable.
    config: Config = ()
    #: torch.compiler.set_stance for the run's compiled calls.
    stance: str = "default"
    #: torch._dynamo.error_on_graph_break(True): a break raises, without fullgraph's one graph.
    error_on_graph_break: bool = False
    #: "model" or "fn": which of the two the run compiles when the snippet defines both (None:
    #: the contract's rule, `model`). Last, so that a report from before it still loads.
    target: str | None = None
    #: How many processes run the snippet, joined by torch.distributed as torchrun joins them
    #: (gloo on CPU, nccl on CUDA); 1 is a plain run. Absent from the JSON when 1, so that a
    #: one-process report reads as it always did.
    ranks: int = 1

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["config"] = {key: _jsonable(value) for key, value in self.config}
        if self.ranks == 1:
            del data["ranks"]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Settings:
        """Rebuild from our own wire format (a report's `settings`); lenient, unknown keys
        ignored. User input (a snippet's SETTINGS, flags) goes through `resolve_settings`."""
        data = dict(data or {})
        base = cls()
        mode = data.get("mode", base.mode)
        return cls(
            fullgraph=bool(data.get("fullgraph", base.fullgraph)),
            dynamic=parse_dynamic(data.get("dynamic", base.dynamic)),
            backend=str(data.get("backend", base.backend) or base.backend),
            mode=None if mode in (None, "default", "") else str(mode),
            device=str(data.get("device", base.device) or base.device),
            cold=bool(data.get("cold", base.cold)),
            config=_lenient_config(data.get("config")),
            stance=str(data.get("stance") or base.stance),
            error_on_graph_break=bool(data.get("error_on_graph_break", base.error_on_graph_break)),
            target=data.get("target") if data.get("target") in TARGETS else base.target,
            ranks=_lenient_ranks(data.get("ranks", base.ranks)),
        )

    def merged(self, overrides: dict[str, Any]) -> Settings:
        """These settings with the keys of `overrides` that are not None applied."""
        return replace(self, **{k: v for k, v in overrides.items() if v is not None})

    def label(self) -> str:
        """A short one-line description for headers and the history list."""
        parts = [
            f"fullgraph={'on' if self.fullgraph else 'off'}",
            f"dynamic={dynamic_name(self.dynamic)}",
            f"backend={self.backend}",
            f"mode={self.mode or 'default'}",
            f"device={self.device}",
        ]
        if self.cold:
            parts.append("cold")
        if self.target is not None:
            parts.append(self.target_word())
        if self.ranks > 1:
            parts.append(f"ranks={self.ranks}")
        return "  ".join(parts + self.switch_words())

    def target_word(self) -> str:
        """ "target=fn": the target the settings choose, as labels show it ("" when not set)."""
        return f"target={self.target}" if self.target is not None else ""

    def switch_words(self) -> list[str]:
        """Torch's own switches that are not at their defaults, one word each: the config keys
        ("dynamo.capture_scalar_outputs=True"), the stance and error_on_graph_break."""
        words = [config_word(key, value) for key, value in self.config]
        if self.stance != "default":
            words.append(f"stance={self.stance}")
        if self.error_on_graph_break:
            words.append("error_on_graph_break")
        return words

    def with_config(self, key: str, value: Any, *, unset: bool = False) -> Settings:
        """These settings with config `key` set to `value` (or removed, with `unset`)."""
        pairs = dict(self.config)
        if unset:
            pairs.pop(key, None)
        else:
            pairs[key] = _frozen(value)
        return replace(self, config=tuple(sorted(pairs.items())))


def config_word(key: str, value: Any) -> str:
    """ "dynamo.recompile_limit=4": a config pair as labels, history and exports show it."""
    return f"{key}={shown_value(_jsonable(value))}"


def _frozen(value: Any) -> Any:
    return tuple(_frozen(v) for v in value) if isinstance(value, (list, tuple)) else value


def _jsonable(value: Any) -> Any:
    return [_jsonable(v) for v in value] if isinstance(value, tuple) else value


def _lenient_ranks(value: Any) -> int:
    """Our own wire format's ranks: an int from 1 to MAX_RANKS, else 1."""
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_RANKS:
        return value
    return 1


def _lenient_config(data: Any) -> Config:
    """Our own wire format's config (a dict, or pairs), keeping what has a config key's shape."""
    try:
        return _config_pairs(data, None, "")
    except SettingsError:
        return ()


#: Every key a SETTINGS dict or an override may name.
SETTING_KEYS: tuple[str, ...] = tuple(f.name for f in fields(Settings))


def cycle(options: tuple[Any, ...] | list[Any], current: Any) -> Any:
    """The option after `current` in `options`, wrapping round; the first if absent."""
    options = list(options)
    try:
        return options[(options.index(current) + 1) % len(options)]
    except ValueError:
        return options[0]


# --- problems ------------------------------------------------------------------------------


@dataclass(frozen=True)
class SettingsProblem:
    """One thing wrong with the settings asked for; becomes the report's `settings` error."""

    type: str  # UnknownSetting | BadSettingValue | SettingsNotLiteral
    message: str
    line: int | None = None
    key: str | None = None

    def to_error(self) -> dict[str, Any]:
        """The contract's error object."""
        return {"kind": "settings", "type": self.type, "message": self.message, "line": self.line, "detail": ""}


class SettingsError(ValueError):
    """The one exception the strict checks raise; `problem` says what and where."""

    def __init__(self, problem: SettingsProblem) -> None:
        super().__init__(problem.message)
        self.problem = problem


def shown_value(value: Any) -> str:
    """A value as the message names it: repr, on one line, never more than 60 characters."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a hostile __repr__ must not break a message
        text = f"<{type(value).__name__}>"
    text = text.replace("\n", "\\n").replace("\r", "\\r")
    return text if len(text) <= 60 else text[:57] + "..."


def _bad(key: str, value: Any, allowed: str, line: int | None, where: str) -> SettingsError:
    kind = "the string " if isinstance(value, str) else ""
    name = f"{where}[{key!r}]" if where else key
    return SettingsError(
        SettingsProblem("BadSettingValue", f"{name} is {kind}{shown_value(value)}; allowed: {allowed}", line, key)
    )


def _check_name(key: str, value: Any, line: int | None, where: str) -> str:
    if not isinstance(value, str) or not NAME.fullmatch(value):
        allowed = "a name such as 'eager', 'aot_eager' or 'inductor' (letters, digits, _ . : -)"
        raise _bad(key, value, allowed, line, where)
    return value


def check_value(key: str, value: Any, line: int | None = None, where: str = "") -> Any:
    """`value` as Settings holds it for `key`, or SettingsError. Strict on types: the string
    "false" is not a bool (bool("false") is True, which would turn fullgraph on). `where` is
    "SETTINGS" when the value comes from the snippet, for the message."""
    if key in ("fullgraph", "cold"):
        if not isinstance(value, bool):
            raise _bad(key, value, "True or False", line, where)
        return value
    if key == "dynamic":
        if value is not None and not isinstance(value, bool):
            raise _bad(key, value, "None (auto), True or False", line, where)
        return value
    if key == "backend":
        return _check_name(key, value, line, where)
    if key == "mode":
        if value is None or (isinstance(value, str) and value == "default"):
            return None
        if not isinstance(value, str) or value not in MODES:
            allowed = ", ".join(["None", "'default'"] + [repr(m) for m in MODES if m])
            raise _bad(key, value, allowed, line, where)
        return value
    if key == "device":
        if not isinstance(value, str) or value not in DEVICES:
            raise _bad(key, value, " or ".join(repr(d) for d in DEVICES), line, where)
        return value
    if key == "error_on_graph_break":
        if not isinstance(value, bool):
            raise _bad(key, value, "True or False", line, where)
        return value
    if key == "stance":
        if not isinstance(value, str) or value not in STANCES:
            raise _bad(key, value, ", ".join(repr(s) for s in STANCES), line, where)
        return value
    if key == "config":
        return _config_pairs(value, line, where)
    if key == "ranks":
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_RANKS:
            raise _bad(key, value, f"a whole number of processes from 1 to {MAX_RANKS}", line, where)
        return value
    if key == "target":
        if value not in TARGETS:
            raise _bad(key, value, "'model', 'fn' or None (the contract's rule: model when both exist)", line, where)
        return value
    raise SettingsError(unknown_key_problem(key, line, where))


def config_key(text: Any) -> str | None:
    """`text` as a config key ("dynamo.capture_scalar_outputs"), the long spelling
    ("torch._dynamo.config.capture_scalar_outputs") folded in; None when it has not that shape."""
    if not isinstance(text, str):
        return None
    for long, short in _CONFIG_PREFIXES.items():
        if text.startswith(long):
            text = short + text[len(long) :]
    return text if CONFIG_KEY.fullmatch(text) else None


def _config_value(value: Any, depth: int = 0) -> bool:
    """Whether `value` is a JSON literal a config key can take (nested lists of scalars)."""
    if value is None or isinstance(value, (bool, int, str)):
        return not isinstance(value, int) or isinstance(value, bool) or abs(value) < 2**63
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, (list, tuple)) and depth < 2 and len(value) <= 64:
        return all(_config_value(v, depth + 1) for v in value)
    return False


def _config_pairs(value: Any, line: int | None, where: str) -> Config:
    """A config mapping (SETTINGS' dict, or the flags' (key, value) pairs) as sorted pairs;
    SettingsError naming the first key of the wrong shape or value that is not a literal."""
    if isinstance(value, Mapping):
        items = list(value.items())
    elif isinstance(value, (list, tuple)) and all(isinstance(p, (list, tuple)) and len(p) == 2 for p in value):
        items = [tuple(p) for p in value]
    else:
        allowed = "a dict such as {'dynamo.capture_scalar_outputs': True}"
        raise _bad("config", value, allowed, line, where)
    pairs: dict[str, Any] = {}
    for raw, item in items:
        key = config_key(raw)
        if key is None:
            allowed = "keys 'dynamo.<name>' (torch._dynamo.config) or 'inductor.<name>' (torch._inductor.config)"
            raise _bad("config", raw, allowed, line, where)
        if not _config_value(item):
            allowed = f"a literal for {key}: True/False, a number, a string, None or a list of them"
            raise _bad("config", item, allowed, line, where)
        pairs[key] = _frozen(item)
    return tuple(sorted(pairs.items()))


def unknown_key_problem(key: Any, line: int | None, where: str = "") -> SettingsProblem:
    """The problem of a key that is not a setting, with the closest one when there is one."""
    hint = ""
    if isinstance(key, str):
        close = difflib.get_close_matches(key, SETTING_KEYS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
    owner = f"{where} has an" if where else "an"
    message = f"{owner} unknown key {shown_value(key)}{hint}; known keys: {', '.join(SETTING_KEYS)}"
    return SettingsProblem("UnknownSetting", message, line, shown_value(key))


@dataclass(frozen=True)
class ResolvedSettings:
    """The settings a run uses, and every problem found while resolving them (first = worst).
    Bad values are left at the lower layer's value; a run with problems is not started."""

    settings: Settings
    problems: tuple[SettingsProblem, ...] = ()

    @property
    def error(self) -> dict[str, Any] | None:
        """The contract's `settings` error for the first problem, or None."""
        return self.problems[0].to_error() if self.problems else None


def settings_from_mapping(
    data: Mapping[Any, Any],
    base: Settings | None = None,
    lines: Mapping[Any, int] | None = None,
    where: str = "",
) -> ResolvedSettings:
    """`base` (the defaults) with every valid key of `data` applied; never raises. `lines` gives
    each key's line in the snippet and `where` its name ("SETTINGS"), for the messages."""
    values: dict[str, Any] = {}
    problems: list[SettingsProblem] = []
    lines = lines or {}
    for key, value in data.items():
        line = lines.get(key)
        if not isinstance(key, str) or key not in SETTING_KEYS:
            problems.append(unknown_key_problem(key, line, where))
            continue
        try:
            values[key] = check_value(key, value, line, where)
        except SettingsError as exc:
            problems.append(exc.problem)
    return ResolvedSettings(replace(base or Settings(), **values), tuple(problems))


def parse_config_assignment(text: str) -> tuple[str, Any]:
    """ "KEY=VALUE" as a config pair: a config key and a JSON literal (true, 4, "name", null,
    [1, 2]); Python's True/False/None are read too, and anything else is the string as typed.
    ValueError, with a message for the user, when `text` is not one. The spelling of --config
    and of the command palette's "Config:" entries."""
    key, sep, raw = text.partition("=")
    name = config_key(key.strip())
    if not sep or name is None:
        raise ValueError(
            f"{shown_value(text)} is not KEY=VALUE with KEY dynamo.<name> or inductor.<name> "
            "(e.g. dynamo.capture_scalar_outputs=true)"
        )
    raw = raw.strip()
    refusal = f"{shown_value(raw)} is not a value for {name}: give true/false, a number, a string or null"
    try:
        value = json.loads(raw)
    except RecursionError:
        # Nested thousands deep: no config value is (lists go two deep at most), and the
        # traceback it raised is no way to say so.
        raise ValueError(refusal + " (or a list of them, two deep at most)") from None
    except ValueError:
        try:
            value = ast.literal_eval(raw)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            value = raw
    if not _config_value(value):
        raise ValueError(refusal)
    return name, _frozen(value)
