"""The shape symbols torch created under dynamic shapes, the guards on them, and where torch
fixed a size to a number, from the structured trace's symbolic-shapes events."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from playground.engine.explain import snippet_line
from playground.engine.report import EntryGuards, RecompileDetail, ShapeSymbol, Specialization, SymbolGuard
from playground.worker.capture.explain.guard_text import SIZE, guarded_arg, user_name


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
        dim = SIZE.search(source)
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
            size = SIZE.search(r.guard)
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
