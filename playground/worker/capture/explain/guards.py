"""One line of torch's guard dump read: its kind, the snippet line that made it, whether it is
torch's own; how soon it can fail, and how a person reads it."""

from __future__ import annotations

import re
from collections.abc import Sequence

from playground.engine.explain import snippet_line
from playground.engine.report import EntryGuards, GuardDetail, GuardSet
from playground.worker.capture.explain.guard_text import guarded_arg, split_guard, user_name

#: Sources that are torch's bookkeeping, not anything the snippet names: Dynamo's aliases for
#: imported modules (`G['__import_torch_dot_nn_dot_modules_dot_module']`, whose four global
#: hook dicts every module call guards) and for the builtins.
_BOOKKEEPING_SOURCE = re.compile(r"\bG\['__(?:import_|builtins_dict___)")
#: Checks on how an object is put together rather than on a value: an instance `__dict__`
#: without an overriding `forward`, a class's dict or MRO, a function's code, defaults or
#: closure, the type of a module's child dicts (`._modules` itself, not `._modules['l']`).
_BOOKKEEPING_PART = re.compile(
    r"\.__dict__\b|\bdict\(type\(|\.__mro__|\.__code__|\.__closure__|\.__(?:kw)?defaults__"
    r"|\._(?:modules|parameters|buffers)(?=[,)\s]|$)"
)
#: Guards on a Python value: they fail when the value changes.
VALUE_KINDS = frozenset(
    {"EQUALS_MATCH", "CONSTANT_MATCH", "TRUE_MATCH", "FALSE_MATCH", "NONE_MATCH", "BOOL_MATCH", "LENGTH_CHECK"}
)

#: Guard kinds about torch's own state, not the user's arguments: folded under one heading.
INTERNAL_KINDS = frozenset(
    {
        "GLOBAL_STATE",
        "TORCH_FUNCTION_MODE_STACK",
        "DEFAULT_DEVICE",
        "GRAD_MODE",
        "DETERMINISTIC_ALGORITHMS",
        "DUAL_LEVEL",
        "FUNCTORCH_STACK_MATCH",
        "AUTOGRAD_SAVED_TENSORS_HOOKS",
        "SHAPE_ENV",
        "BACKEND_MATCH",
        # torch's check that nobody called mark_dynamic since: bookkeeping, not a value the user set
        "DIMENSION_DYNAMIC_MARKING_GUARD",
    }
)


def parse_guard(body: str, snippet_path: str) -> GuardDetail:
    """One line of torch's guard dump (`KIND: check  # code  # file:line in fn`) with the snippet
    line that made it and whether it is one of torch's internal guards: torch's own state, and
    its bookkeeping on a real model (the global module-hook dicts, `__dict__` checks, import
    aliases), which no edit to the snippet's values makes fail."""
    kind, _, rest = body.partition(": ")
    if not rest:
        kind, rest = "", body
    parsed = split_guard(rest)
    line = snippet_line(parsed.file, parsed.line, snippet_path)
    arg = guarded_arg(parsed.check)
    internal = kind in INTERNAL_KINDS or (line is None and not arg) or is_bookkeeping(parsed.check)
    if kind == "ID_MATCH" and line is None:
        internal = True  # ids of modules and functions torch looked up, not a value the user passes
    check = user_name(parsed.check)
    short = short_guard(kind, check, arg)
    return GuardDetail(
        kind=kind,
        check=check,
        arg=arg,
        line=line,
        code=parsed.code,
        note=parsed.note,
        internal=internal,
        rank=guard_rank(kind, arg, check),
        short=short if short != check else "",
        leaf=value_leaf(check, arg),
    )


def is_bookkeeping(check: str) -> bool:
    """Whether a guard's check (torch's text, with its `L[...]`/`G[...]` sources) is about torch's
    or a library's bookkeeping rather than a value the snippet holds."""
    return bool(_BOOKKEEPING_SOURCE.search(check) or _BOOKKEEPING_PART.search(check))


def guard_rank(kind: str, arg: str, check: str = "") -> int:
    """How soon a (non-internal) guard can fail on the user's next change, lowest first:
    0 a variable's shape, dtype or value (`x: float32 size=[8]`, `lr == 0.1`: the next call can
    change them); 1 a module attribute's value (`net.training == False`, `net.config.use_cache
    == True`: a line of code can change them); 2 the model's structure (its modules' types, its
    parameters' shapes, which attributes exist: only building another model changes them)."""
    plain = bool(arg) and "." not in arg and "[" not in arg
    if kind == "NO_TENSOR_ALIASING":
        # Two arguments passed as one tensor make it fail; one of the model's own buffers cannot.
        names = re.findall(r"[\w.\[\]]+", check.partition("(")[2])
        return 0 if names and all("." not in n and "[" not in n for n in names) else 2
    if "__class__" in arg:
        return 2  # `net.__class__.__name__ == 'BertModel'`: the type, by another name
    if kind in VALUE_KINDS or kind == "TENSOR_MATCH" or (kind == "LAMBDA_GUARD" and arg):
        if plain:
            return 0
        if kind in VALUE_KINDS and kind != "LENGTH_CHECK":  # a length beside its value's own guard
            return 1
    return 2


def short_guard(kind: str, check: str, arg: str) -> str:
    """A guard as a person reads it: a tensor check as `x: float32 size=[2, 3]`, a type check as
    `net: type BertModel`, the rest as is."""
    if kind == "TENSOR_MATCH":
        dtype = re.search(r"torch\.(\w+)", check)
        size = re.search(r"size=(\[[^\]]*\])", check)
        return f"{arg}: {dtype.group(1) if dtype else ''} size={size.group(1) if size else '?'}"
    if kind == "TYPE_MATCH" and arg:
        named = re.search(r"type=<class '(?:[\w.]+\.)?(\w+)'>", check)
        if named:
            return f"{arg}: type {named.group(1)}"
    return check


def value_leaf(check: str, arg: str) -> str:
    """A module attribute's value guard without the module's path (`net.encoder.layer[0].dropout.p
    == 0.1` -> `.p == 0.1`), so that the same setting on many modules folds into one item; ""
    when the check does not start with the attribute."""
    if not arg or not check.startswith(arg) or "." not in arg:
        return ""
    return "." + arg.rsplit(".", 1)[1] + check[len(arg) :]


def guard_details(entries: Sequence[GuardSet], snippet_path: str) -> tuple[EntryGuards, ...]:
    """Per compiled entry, each guard parsed (see parse_guard)."""
    return tuple(
        EntryGuards(
            compile_id=entry.compile_id,
            function=entry.function,
            guards=tuple(parse_guard(g, snippet_path) for g in entry.guards),
        )
        for entry in entries
    )
