"""Why it recompiled, where each guard came from, the shape symbols, which entry ran each call.

Torch-free: it shapes text and records torch already produced (the recompiles_verbose log, the
guard dump, the structured trace's symbolic-shapes events) and the worker's per-call notes into
the report's extension fields. Nothing here guesses: a value the records do not hold stays "".
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from playground.engine.report import (
    CallEntry,
    EntryGuards,
    GuardDetail,
    GuardSet,
    LimitDetail,
    ReasonRow,
    RecompileDetail,
    ShapeSymbol,
    Specialization,
    SymbolGuard,
)

#: `check  # code  # file:line in fn (note)`: torch's comment on a guard or a recompile reason.
_LOCATION = re.compile(r"#\s*(?P<file>[^#\s][^#]*?):(?P<line>\d+) in (?P<fn>[\w<>.]+)(?P<note>\s*\(.*\))?\s*$", re.S)
_SOURCE = re.compile(r"\b[LG]\['(?P<name>[^']+)'\](?P<rest>(?:\.\w+|\[[^\]]*\]|\(\))*)")
_ATTR_DICT = re.compile(r"\._(?:modules|parameters|buffers)\['([^']+)'\]")
#: A child of a ModuleList or Sequential (`._modules['0']`): written `layer[0]` in Python.
_INDEX_DICT = re.compile(r"\._modules\['(\d+)'\]")
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
_TENSOR_REASON = re.compile(
    # The name may hold quotes itself (`kwargs['position_ids']`): it ends at the quote before the words.
    r"tensor '(?P<src>.+?)' (?P<what>[\w ]+?) mismatch(?: at index (?P<index>\d+))?\. "
    r"expected (?P<was>.+?), actual (?P<now>.+?)$"
)
_EQUALS = re.compile(r"^(?P<lhs>.+?)\s*==\s*(?P<rhs>.+)$")
#: An identity guard: the entry was built for one object (or type), and another arrived.
_ID_GUARD = re.compile(r"^___check_(?P<which>obj|type)_id\((?P<src>.+?), (?P<id>\d+)\)")
_ENTRY_HEAD = re.compile(r"^-?\s*(?P<cid>\d+/\d+):\s*(?P<text>.*)$")
_FILE_LINE = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')
_SIZE = re.compile(r"size\(\)\[(\d+)\]")

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


@dataclass(frozen=True)
class GuardText:
    """One guard or reason split at torch's comment: the check, the code line torch quoted, the
    location (torch shortens paths: `mp/h11/snip.py`), and any parenthesised note."""

    check: str
    code: str = ""
    file: str = ""
    line: int | None = None
    function: str = ""
    note: str = ""


def split_guard(text: str) -> GuardText:
    text = text.strip()
    parts = re.split(r"\s{2,}#\s?|\s#\s", text, maxsplit=1)
    check = parts[0].strip()
    comment = parts[1].strip() if len(parts) > 1 else ""
    if not comment:
        return GuardText(check)
    loc = _LOCATION.search("# " + comment)
    if loc is None:
        return GuardText(check, note=comment)
    code = ("# " + comment)[: loc.start()].lstrip("# ").strip()
    note = (loc["note"] or "").strip()[1:-1]
    # torch may append the framework frame that also added it: "(note) and (file:line in fn)".
    note = note.split(") and (")[0]
    return GuardText(check, code, loc["file"].strip(), int(loc["line"]), loc["fn"], note)


def snippet_line(file: str, line: int | None, snippet_path: str) -> int | None:
    """`line` when `file` is the snippet, else None: the one test of "is this location the
    snippet's" for every record torch writes (a log, a guard's comment, a trace's stack).

    torch shortens the paths in its comments by cutting characters off the front, not folders
    (`/tmp/h11/s.py` -> `mp/h11/s.py`, torch.utils._traceback.shorten_filename), so a relative
    path counts when it is a suffix of the snippet's real path that ends in its whole name. An
    absolute path is never shortened: it must be the snippet itself."""
    if line is None or not file:
        return None
    try:
        real = os.path.realpath(snippet_path)
        if file == snippet_path or os.path.realpath(file) == real:
            return line
    except (OSError, ValueError):  # a NUL byte in a path torch or the user wrote
        return line if file == snippet_path else None
    tail = file.replace("\\", "/")
    if tail.startswith("/") or os.path.basename(tail) != os.path.basename(real):
        return None
    return line if real.replace("\\", "/").endswith(tail) else None


def user_name(source: str) -> str:
    """`L['lr']` -> `lr`, `L['self']._modules['l']._parameters['weight']` -> `self.l.weight`,
    `G['net']._modules['layer']._modules['0']` -> `net.layer[0]`,
    `G['__builtins_dict___13']['print']` -> `print` (Dynamo's alias for the builtins)."""
    text = _INDEX_DICT.sub(r"[\1]", source)
    text = _ATTR_DICT.sub(r".\1", text)
    text = re.sub(r"\b[LG]\['([^']+)'\]", r"\1", text)
    return re.sub(r"\b__builtins_dict___\d+\['([^']+)'\]", r"\1", text)


def guarded_arg(check: str) -> str:
    """The argument a guard or reason is about, as the user names it (`self.w`, `x`), or ""."""
    tensor = re.search(r"tensor '(.+?)'(?=\s|$)", check)  # ends at a quote before a space
    if tensor:
        return user_name(tensor.group(1)).split(".size(")[0]
    identity = _ID_GUARD.match(check.strip())
    if identity:
        return user_name(identity["src"])
    match = _SOURCE.search(check)
    if match is None:
        bare = re.match(r"^\s*(?:\d+\s*<=\s*)?([A-Za-z_][\w.]*)", check)
        if bare is None or bare.group(1).startswith(("___", "torch", "utils_")):
            return ""
        return re.sub(r"\.(?:size|stride|storage_offset)$", "", bare.group(1))
    rest = re.sub(r"\.(?:size|stride|storage_offset)\(\)(?:\[\d+\])?.*$", "", match["rest"])
    return user_name(f"L['{match['name']}']{rest}")


# --- guards ---------------------------------------------------------------------------------


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
    return GuardDetail(
        kind=kind,
        check=user_name(parsed.check),
        arg=arg,
        line=line,
        code=parsed.code,
        note=parsed.note,
        internal=internal,
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


# --- recompiles -----------------------------------------------------------------------------


@dataclass(frozen=True)
class RecompileRecord:
    """One recompiles_verbose record as the worker found it: the function, the compile id torch
    logged it under, its message, and the call of inputs() it was logged during."""

    function: str
    compile_id: str | None
    message: str
    call: int | None


def parse_recompile_message(message: str, snippet_path: str) -> list[dict[str, Any]]:
    """The recompiles_verbose message as [{entry, failures: [text], line}], one per cache entry
    that failed (torch lists them newest first). `line` is the snippet line of the user stack."""
    entries: list[dict[str, Any]] = []
    for raw in message.splitlines():
        line = raw.strip()
        if not line.startswith("- "):
            continue
        body = line[2:].strip()
        head = _ENTRY_HEAD.match(body)
        if head:
            entries.append({"entry": head["cid"], "failures": _split_failures(head["text"]), "line": None})
            continue
        where = _FILE_LINE.search(body)
        if where and entries:
            found = snippet_line(where["file"], int(where["line"]), snippet_path)
            if found is not None:
                entries[-1]["line"] = found
    return entries


def _split_failures(text: str) -> list[str]:
    """recompiles_verbose joins an entry's failing checks with "; " (guards.py): split them back,
    but only where a new check starts (a comment may hold "; " too)."""
    parts = re.split(r";\s+(?=(?:tensor '|[LG]\[|\d+\s*<=|[A-Za-z_][\w.]*\s*(?:==|!=|<|>|is)\b))", text)
    return [p.strip() for p in parts if p.strip()]


def reason_row(text: str, snippet_path: str, now_args: dict[str, str], stack_line: int | None) -> ReasonRow:
    """One failing guard (its entries not yet known): `was` what the entry was built
    for, `now` what arrived. Tensor reasons carry both; a value guard (`lr == 0.1`) carries the
    old value, and the call's own argument gives the new one."""
    parsed = split_guard(text)
    check = user_name(parsed.check)
    arg = guarded_arg(parsed.check)
    was = now = ""
    tensor = _TENSOR_REASON.match(check)
    if tensor:
        what = tensor["what"]
        index = f" {tensor['index']}" if tensor["index"] else ""
        check = f"{what} of {arg}" + (f" dim{index}" if index else "")
        was, now = tensor["was"], tensor["now"]
    elif identity := _ID_GUARD.match(check):
        # The ids alone would read as the same text twice: the old id, and what arrived instead.
        what = "type" if identity["which"] == "type" else "object"
        check = f"{what} identity of {arg}"
        was = f"id {identity['id']}"
        now = f"another {what}" + (f": {now_args[arg]}" if now_args.get(arg) else "")
    else:
        equals = _EQUALS.match(check)
        if equals and guarded_arg(equals["lhs"]) == arg and arg:
            was = equals["rhs"].strip()
            now = now_args.get(arg, "")
        elif arg in now_args:
            now = _dimension(check, now_args[arg])
    line = snippet_line(parsed.file, parsed.line, snippet_path) or stack_line
    return ReasonRow(arg=arg, guard=check, was=was, now=now, line=line, note=parsed.note)


def _dimension(check: str, described: str) -> str:
    """For a size guard (`2 <= x.size()[0]`), the size that arrived: from `float32[1, 8]`."""
    size = _SIZE.search(check)
    shape = re.search(r"\[([\d, ]*)\]", described)
    if size and shape:
        dims = [d.strip() for d in shape.group(1).split(",") if d.strip()]
        index = int(size.group(1))
        if index < len(dims):
            return f"size()[{index}] = {dims[index]}"
    return described


def recompile_details(
    recompiles: Sequence[RecompileRecord], calls: Sequence[CallEntry], snippet_path: str
) -> tuple[RecompileDetail, ...]:
    """One row per (recompile, argument, guard kind): each entry failing on `lr` gives one row,
    not one per entry, with the newest entry's expectation as `was` and the count of entries."""
    out = []
    for rc in recompiles:
        call = next((c for c in calls if c.call == rc.call), None) or _call_of(rc.compile_id, calls)
        made = any(rc.compile_id in c.compiled for c in calls)
        now_args = dict(call.args) if call else {}
        rows: dict[tuple[str, str], ReasonRow] = {}
        for failed in parse_recompile_message(rc.message, snippet_path):
            for text in failed["failures"]:
                row = reason_row(text, snippet_path, now_args, failed["line"])
                key = (row.arg, _shape_of(row.guard))
                seen = rows.get(key)
                if seen is None:
                    rows[key] = replace(row, entries=(failed["entry"],))
                else:
                    rows[key] = replace(seen, entries=(*seen.entries, failed["entry"]))
        out.append(
            RecompileDetail(
                function=rc.function,
                # None when no entry came of it: the attempt that hit recompile_limit.
                entry=rc.compile_id if made or not calls else None,
                call=call.call if call else None,
                reasons=tuple(rows.values()),
            )
        )
    return tuple(out)


def _shape_of(guard: str) -> str:
    """A guard with its constants removed: `lr == 0.1` and `lr == 0.09` are the same guard kind."""
    return re.sub(r"(?<![\w\]])-?\d[\d.e+-]*", "N", guard)


def _call_of(compile_id: str | None, calls: Sequence[CallEntry]) -> CallEntry | None:
    for call in calls:
        if compile_id and compile_id in call.compiled:
            return call
    return None


def limit_details(
    limit_messages: Sequence[str], details: Sequence[RecompileDetail], snippet_path: str
) -> tuple[LimitDetail, ...]:
    """For each recompile_limit warning: the function, the limit, the argument whose changes used
    it up (the one most recompiles failed on), and the hints this torch's message and measured
    behaviour support."""
    out = []
    for message in limit_messages:
        head = re.search(r"hit config\.(?P<kind>\w+) \((?P<n>\d+)\)", message)
        fn = re.search(r"function: '(?P<fn>[^']*)'", message)
        if head is None:
            continue
        name = fn["fn"] if fn else ""
        counts: Counter[str] = Counter()
        for rc in details:
            if rc.function == name:
                counts.update({r.arg for r in rc.reasons if r.arg})
        arg = counts.most_common(1)[0][0] if counts else ""
        kinds = [r.guard for rc in details if rc.function == name for r in rc.reasons if r.arg == arg]
        url = re.search(r"see (https?://\S+)", message)
        out.append(
            LimitDetail(
                function=name,
                config=head["kind"],
                limit=int(head["n"]),
                arg=arg,
                recompiles_on_arg=counts.get(arg, 0),
                hints=_hints(arg, kinds, head["kind"]),
                doc=url.group(1) if url else "",
            )
        )
    return tuple(out)


def _hints(arg: str, guards: list[str], config: str) -> tuple[str, ...]:
    """Remedies stated as what torch does (measured by the gallery, tests/test_gallery.py)."""
    hints = []
    if any("size" in g for g in guards):
        hints.append(
            f"mark the changing dimension of {arg or 'the tensor'} dynamic: torch._dynamo.mark_dynamic(tensor, dim), "
            "or dynamic=None (one recompile, then symbolic) / dynamic=True"
        )
    elif any(" == " in g for g in guards):
        hints.append(
            f"{arg or 'the value'} is a Python constant to Dynamo: pass it as a tensor (no recompile: lr_tensor.py), "
            "or dynamic=None (one recompile, then symbolic: lr_float_auto.py)"
        )
    hints.append(f"raise torch._dynamo.config.{config} only if each value really needs its own graph")
    return tuple(hints)


# --- per call ---------------------------------------------------------------------------------


def call_summary(call: CallEntry, details: Sequence[RecompileDetail]) -> str:
    """ "call 3 ran entry 0/2 (compiled now: lr changed 0.098 -> 0.093)" and the like."""
    index, entry, status = call.call, call.entry, call.status
    if status == "compiled":
        why = ""
        for rc in details:
            if rc.entry == entry and rc.reasons:
                r = rc.reasons[0]
                if r.arg and (r.was or r.now):
                    why = f": recompiled because {r.arg} changed {r.was or '?'} -> {r.now or '?'}"
                else:
                    why = f": recompiled because {r.guard} failed"
        first = "" if why else ": first compile"
        return f"call {index} ran entry {entry} (compiled now{why or first})"
    if status == "cached":
        return f"call {index} ran entry {entry} (cached)"
    if status == "eager":
        return f"call {index} ran eagerly: no entry's guards passed ({call.why or 'not compiled'})"
    return f"call {index}: entry unknown ({call.why or 'torch gave no signal'})"


# --- shape symbols ----------------------------------------------------------------------------


def shape_symbols(
    events: list[tuple[str, str, dict[str, Any]]], files: dict[int, str], snippet_path: str
) -> tuple[ShapeSymbol, ...]:
    """Each symbol torch created, with the guards torch added on it. `events` are (kind,
    compile_id, metadata) from the trace."""
    symbols: dict[tuple[str, str], ShapeSymbol] = {}
    for kind, cid, md in events:
        if kind != "create_symbol":
            continue
        source = str(md.get("source", ""))
        dim = _SIZE.search(source)
        symbols[(cid, str(md.get("symbol")))] = ShapeSymbol(
            compile_id=cid,
            symbol=str(md.get("symbol", "")),
            source=user_name(source),
            arg=guarded_arg(source),
            dim=int(dim.group(1)) if dim else None,
            value=str(md.get("val", "")),
            range=str(md.get("vr", "")),
            line=_stack_line(md.get("user_stack"), files, snippet_path),
        )
    for kind, cid, md in events:
        if kind not in ("guard_added", "guard_added_fast"):
            continue
        expr = str(md.get("expr", ""))
        for (sym_cid, name), sym in symbols.items():
            if sym_cid == cid and re.search(rf"\b{re.escape(name)}\b", expr):
                guard = SymbolGuard(expr=expr, line=_stack_line(md.get("user_stack"), files, snippet_path))
                if guard not in sym.guards:
                    symbols[(sym_cid, name)] = replace(sym, guards=(*sym.guards, guard))
    return tuple(symbols.values())


def specializations(
    events: list[tuple[str, str, dict[str, Any]]],
    files: dict[int, str],
    snippet_path: str,
    details: Sequence[RecompileDetail],
    guards: Sequence[EntryGuards],
) -> tuple[Specialization, ...]:
    """Where torch fixed a size to a number: its symbolic_shape_specialization records, and an
    entry compiled after a size guard failed whose TENSOR_MATCH pins that dimension (sizes 0 and
    1: torch's guard note names the reason)."""
    out = []
    for kind, cid, md in events:
        if kind != "symbolic_shape_specialization":
            continue
        out.append(
            Specialization(
                compile_id=cid,
                symbol=str(md.get("symbol", "")),
                source=", ".join(user_name(s) for s in md.get("sources") or ()),
                value=str(md.get("value", "")),
                reason=str(md.get("reason", "")),
                line=_stack_line(md.get("user_stack"), files, snippet_path),
            )
        )
    by_id = {g.compile_id: g for g in guards}
    for rc in details:
        for r in rc.reasons:
            size = _SIZE.search(r.guard)
            if not size or "specializ" not in r.note:
                continue
            pinned = _pinned_size(by_id.get(rc.entry or ""), r.arg, int(size.group(1)))
            if pinned is None:
                continue
            out.append(
                Specialization(
                    compile_id=rc.entry or "",
                    symbol="",
                    source=f"{r.arg}.size()[{size.group(1)}]",
                    value=pinned,
                    reason=r.note,
                    line=r.line,
                )
            )
    return tuple(out)


def _pinned_size(entry: EntryGuards | None, arg: str, dim: int) -> str | None:
    """The number TENSOR_MATCH fixes `arg`'s dimension to in that entry (None if symbolic)."""
    for g in entry.guards if entry is not None else ():
        if g.kind == "TENSOR_MATCH" and g.arg == arg:
            sizes = re.search(r"size=\[([^\]]*)\]", g.check)
            if sizes:
                dims = [d.strip() for d in sizes.group(1).split(",")]
                if dim < len(dims) and dims[dim] not in ("None", ""):
                    return dims[dim]
    return None


def _stack_line(stack: Any, files: dict[int, str], snippet_path: str) -> int | None:
    """The innermost frame of a trace user_stack that is in the snippet."""
    found = None
    for frame in stack or ():
        if not isinstance(frame, dict):
            continue
        file = frame.get("filename")
        name = files.get(file, "") if isinstance(file, int) else str(file or "")
        line = snippet_line(name, frame.get("line"), snippet_path)
        if line is not None:
            found = line
    return found
