"""A snippet's `SETTINGS`, read without running it, and the settings a run uses worked out from it.

Settings are resolved once, by `resolve_settings`: the defaults, then the snippet's literal
`SETTINGS`, then the command line (or the app's keys). The snippet is never run for this: its
`SETTINGS` is read with `ast`, strictly. A `SETTINGS` that is not one module-level literal is a
problem named with its line (`SettingsNotLiteral`): we cannot see what running it would give.
Torch-free.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from playground.engine.settings import (
    ResolvedSettings,
    Settings,
    SettingsError,
    SettingsProblem,
    check_value,
    settings_from_mapping,
    shown_value,
    unknown_key_problem,
)


@dataclass(frozen=True)
class SnippetSettings:
    """What a snippet's SETTINGS literal gives: the keys given (unchecked) with their lines, or
    the problem that kept it from being read."""

    given: dict[str, Any]
    lines: dict[str, int]
    problems: tuple[SettingsProblem, ...] = ()
    line: int | None = None
    #: False when the text does not parse: it says nothing of SETTINGS (a save half-way through
    #: an edit), so nothing it lacks is taken as removed.
    parsed: bool = True

    def valid_keys(self) -> dict[str, Any]:
        """The keys given with a valid value (the app's initial toggles)."""
        return {key: value for key, value in self.given.items() if _valid(key, value)}


_NESTED = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.With, ast.AsyncWith, ast.Match)
if hasattr(ast, "TryStar"):  # Python 3.11+
    _NESTED = (*_NESTED, ast.TryStar)


def _children(node: ast.AST) -> list[ast.stmt]:
    """The statements directly inside a compound statement (not inside def or class)."""
    out: list[ast.stmt] = []
    for name in ("body", "orelse", "finalbody"):
        out.extend(getattr(node, name, None) or [])
    for handler in getattr(node, "handlers", None) or []:
        out.extend(handler.body)
    for case in getattr(node, "cases", None) or []:
        out.extend(case.body)
    return out


def _names_settings(target: ast.AST) -> bool:
    if isinstance(target, ast.Name):
        return target.id == "SETTINGS"
    if isinstance(target, (ast.Tuple, ast.List)):
        return any(_names_settings(t) for t in target.elts)
    if isinstance(target, ast.Starred):
        return _names_settings(target.value)
    return False


def _changes_settings(node: ast.stmt) -> bool:
    """`SETTINGS[k] = v`, `SETTINGS.update(...)`, `SETTINGS |= ...`: edits we cannot see."""

    def is_settings(n: ast.AST) -> bool:
        return isinstance(n, ast.Name) and n.id == "SETTINGS"

    if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if isinstance(node, ast.AugAssign) and is_settings(node.target):
            return True
        return any(isinstance(t, (ast.Subscript, ast.Attribute)) and is_settings(t.value) for t in targets)
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        func = node.value.func
        return isinstance(func, ast.Attribute) and is_settings(func.value)
    if isinstance(node, ast.Delete):
        return any(_names_settings(t) or (isinstance(t, ast.Subscript) and is_settings(t.value)) for t in node.targets)
    return False


def _defines_settings(node: ast.stmt) -> ast.expr | None | bool:
    """The assigned value when `node` binds SETTINGS (None when it binds it some other way,
    e.g. an import), False when it does not bind it."""
    if isinstance(node, ast.Assign) and any(_names_settings(t) for t in node.targets):
        plain = all(isinstance(t, ast.Name) for t in node.targets)
        return node.value if plain else None
    if isinstance(node, ast.AnnAssign) and _names_settings(node.target):
        return node.value
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        if any((alias.asname or alias.name.split(".")[0]) == "SETTINGS" for alias in node.names):
            return None
    if isinstance(node, (ast.For, ast.AsyncFor)) and _names_settings(node.target):
        return None
    return False


def _scan(body: list[ast.stmt], nested: bool, found: list[tuple[ast.stmt, Any, bool]], edits: list[ast.stmt]) -> None:
    for node in body:
        value = _defines_settings(node)
        if value is not False:
            found.append((node, value, nested))
        elif _changes_settings(node):
            edits.append(node)
        if isinstance(node, _NESTED):
            _scan(_children(node), True, found, edits)


def _not_literal(line: int, why: str) -> SettingsProblem:
    return SettingsProblem(
        "SettingsNotLiteral",
        f"SETTINGS {why}; it is read without running the snippet: write one module-level "
        "literal dict such as SETTINGS = {'fullgraph': True}",
        line,
    )


def _literal(node: ast.expr, key: str) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise SettingsError(_not_literal(node.lineno, f"[{key!r}] is not a literal")) from None


def _pairs(value: ast.expr, line: int) -> list[tuple[Any, ast.expr, int]]:
    """(key, value node, line) for a dict literal or dict(...) of literals; SettingsError else."""
    if isinstance(value, ast.Dict):
        out = []
        for k, v in zip(value.keys, value.values, strict=True):
            if k is None:
                raise SettingsError(_not_literal(v.lineno, "unpacks another dict with **"))
            key = _literal(k, "key")
            out.append((key, v, k.lineno))
        return out
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "dict":
        out = []
        if len(value.args) > 1 or (value.args and not isinstance(value.args[0], ast.Dict)):
            raise SettingsError(_not_literal(line, "is dict(...) of something other than a literal dict"))
        if value.args:
            out.extend(_pairs(value.args[0], line))
        for kw in value.keywords:
            if kw.arg is None:
                raise SettingsError(_not_literal(kw.value.lineno, "unpacks another dict with **"))
            out.append((kw.arg, kw.value, kw.value.lineno))
        return out
    try:
        shown = shown_value(ast.literal_eval(value))
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise SettingsError(_not_literal(line, "is computed, not a literal dict")) from None
    raise SettingsError(
        SettingsProblem("BadSettingValue", f"SETTINGS is {shown}, not a dict; write e.g. {{'fullgraph': True}}", line)
    )


def read_snippet_settings(text: str) -> SnippetSettings:
    """The snippet's module-level SETTINGS, read with ast; never raises. A snippet that does not
    parse gives nothing (the worker reports its syntax error)."""
    text = text.removeprefix("\ufeff")
    if "SETTINGS" not in text:
        return SnippetSettings({}, {})  # the common case, and a 50 MB snippet is not parsed twice
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return SnippetSettings({}, {}, parsed=False)
    found: list[tuple[ast.stmt, Any, bool]] = []
    edits: list[ast.stmt] = []
    _scan(tree.body, False, found, edits)
    if not found:
        return SnippetSettings({}, {})
    node, value, nested = found[0]
    if len(found) > 1:
        where = ", ".join(str(n.lineno) for n, _, _ in found[:5])
        return _failed(node.lineno, _not_literal(found[1][0].lineno, f"is bound more than once (lines {where})"))
    if nested:
        return _failed(node.lineno, _not_literal(node.lineno, "is assigned inside a block (if, try, for, with…)"))
    if value is None:
        return _failed(node.lineno, _not_literal(node.lineno, "is not assigned a literal"))
    if edits:
        return _failed(node.lineno, _not_literal(edits[0].lineno, f"is changed at line {edits[0].lineno}"))
    try:
        pairs = _pairs(value, node.lineno)
    except SettingsError as exc:
        return _failed(node.lineno, exc.problem)
    given: dict[str, Any] = {}
    lines: dict[str, int] = {}
    problems: list[SettingsProblem] = []
    for key, value_node, line in pairs:
        if not isinstance(key, str):
            problems.append(unknown_key_problem(key, line, "SETTINGS"))
            continue
        if key in given:
            message = f"SETTINGS gives the key {shown_value(key)} twice (Python keeps the last); keep one"
            problems.append(SettingsProblem("BadSettingValue", message, line, shown_value(key)))
            continue
        try:
            given[key] = _literal(value_node, str(key))
        except SettingsError as exc:
            problems.append(exc.problem)
            continue
        lines[key] = line
    return SnippetSettings(given, lines, tuple(problems), node.lineno)


def _failed(line: int, problem: SettingsProblem) -> SnippetSettings:
    return SnippetSettings({}, {}, (problem,), line)


def resolve_settings(
    text: str | None, overrides: Mapping[str, Any] | None = None, base: Settings | None = None
) -> ResolvedSettings:
    """The one place settings are worked out: `base` (the defaults), then the snippet's SETTINGS
    (from `text`, None when there is no snippet text), then `overrides` (the command line or the
    app's keys: only the keys given, already typed: {"dynamic": None} means auto). Never raises."""
    snippet = read_snippet_settings(text) if text else SnippetSettings({}, {})
    return layered_settings(snippet, overrides, base)


def layered_settings(
    snippet: SnippetSettings, overrides: Mapping[str, Any] | None = None, base: Settings | None = None
) -> ResolvedSettings:
    """`resolve_settings` for a SETTINGS already read: a front end that needs both the settings
    and the literal's keys reads the snippet once."""
    from_file = settings_from_mapping(snippet.given, base, snippet.lines, "SETTINGS")
    problems = [*snippet.problems, *from_file.problems]
    given = dict(overrides or {})
    if "config" in given and from_file.settings.config:
        # --config adds to the snippet's config keys (or sets one anew); it does not drop the rest.
        try:
            flags = check_value("config", given["config"])
            given["config"] = dict(from_file.settings.config) | dict(flags)
        except SettingsError:
            pass  # reported below, with the flags' other problems
    from_flags = settings_from_mapping(given, from_file.settings)
    problems.extend(from_flags.problems)
    return ResolvedSettings(from_flags.settings, tuple(problems))


def snippet_settings_error(text: str) -> dict[str, Any] | None:
    """The contract's `settings` error for the first problem in the snippet's SETTINGS (unknown
    key, bad value, not a literal), or None when SETTINGS is absent or fine."""
    return resolve_settings(text).error


def literal_settings(text: str) -> dict[str, Any]:
    """The valid keys of the snippet's module-level SETTINGS, read without running the snippet
    (the UI needs its initial toggles before the worker has torch). The problems in it are
    reported by `snippet_settings_error`, not here."""
    return read_snippet_settings(text).valid_keys()


def _valid(key: str, value: Any) -> bool:
    try:
        check_value(key, value)
    except SettingsError:
        return False
    return True
