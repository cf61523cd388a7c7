"""Why it recompiled, from torch's recompiles_verbose records: one row per failing guard and
argument (what the entry was built for, what arrived), the recompile_limit hits, and which
entry served each call, in words."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from playground.engine.explain import snippet_line
from playground.engine.report import CallEntry, LimitDetail, ReasonRow, RecompileDetail
from playground.worker.capture.explain.guard_text import (
    ID_GUARD,
    SIZE,
    guarded_arg,
    split_guard,
    user_name,
)

_TENSOR_REASON = re.compile(
    # The name may hold quotes itself (`kwargs['position_ids']`): it ends at the quote before the words.
    r"tensor '(?P<src>.+?)' (?P<what>[\w ]+?) mismatch(?: at index (?P<index>\d+))?\. "
    r"expected (?P<was>.+?), actual (?P<now>.+?)$"
)
_EQUALS = re.compile(r"^(?P<lhs>.+?)\s*==\s*(?P<rhs>.+)$")
_ENTRY_HEAD = re.compile(r"^-?\s*(?P<cid>\d+/\d+):\s*(?P<text>.*)$")
_FILE_LINE = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)')


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
    elif identity := ID_GUARD.match(check):
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
    size = SIZE.search(check)
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
