"""Recompile reasons as torch logs them, read once: "1/0: <failed guard>  # <source>", each
possibly followed by context lines ("User stack trace:", a File line, the code) that belong to
it, and the guard of that entry it names.

The views read the result (`Recompile.failures`), never the reason text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from playground.engine.report import GuardFailure, GuardSet, Recompile

_HEAD = re.compile(r"^\s*(?P<cid>\d+/\d+):\s*(?P<text>.*)$")
_LOCAL = re.compile(r"L\['([^']+)'\]")
_TENSOR = re.compile(r"tensor '(?P<name>[^']+)'")


def split_comment(text: str) -> tuple[str, str]:
    """(the check, torch's `# source line` comment), the log's column padding removed."""
    parts = re.split(r"\s{2,}#|\s#\s", text, maxsplit=1)
    comment = f"# {parts[1].strip()}" if len(parts) > 1 else ""
    return parts[0].strip(), comment


def normalize(expression: str) -> str:
    """`L['x'] == 1` and `x == 1` name the same check: the log drops the `L[...]`."""
    return re.sub(r"\s+", " ", _LOCAL.sub(r"\1", expression)).strip()


def parse_reasons(lines: Sequence[str]) -> list[GuardFailure]:
    """Group raw reason lines into failures; lines before any `N/M:` head stand alone."""
    failures: list[GuardFailure] = []
    for line in lines:
        match = _HEAD.match(line)
        if match:
            check, comment = split_comment(match["text"].strip())
            failures.append(GuardFailure(entry=match["cid"], check=check, comment=comment))
        elif failures:
            last = failures[-1]
            failures[-1] = replace(last, context=(*last.context, line.strip()))
        elif line.strip():
            check, comment = split_comment(line.strip())
            failures.append(GuardFailure(entry=None, check=check, comment=comment))
    return failures


def find_guard(guards: Sequence[str], expression: str) -> int | None:
    """The index of the guard in an entry's list that a reason's check names: by the check's own
    text when it is a guard expression ("L['lr'] == 0.1"), else by the tensor it names."""
    wanted = normalize(expression)
    if wanted:
        for index, guard in enumerate(guards):
            check = split_comment(guard.split(": ", 1)[-1])[0]
            if normalize(check) == wanted:
                return index
        for index, guard in enumerate(guards):
            if wanted in normalize(guard):
                return index
    tensor = _TENSOR.search(expression)
    if tensor:
        source = f"L['{tensor['name']}']"
        for index, guard in enumerate(guards):
            if "TENSOR_MATCH" in guard and source in guard:
                return index
        for index, guard in enumerate(guards):
            if source in guard:
                return index
    return None


def failures(recompile: Recompile, guards: Sequence[GuardSet]) -> tuple[GuardFailure, ...]:
    """The recompile's reasons as failures, each with the index of the guard it names in the
    entry it failed against (None when that entry's guards do not hold it)."""
    by_id = {entry.compile_id: entry.guards for entry in guards}
    return tuple(
        replace(f, guard=find_guard(by_id.get(f.entry, ()), f.check)) if f.entry is not None else f
        for f in parse_reasons(recompile.reasons)
    )


def read(recompiles: Sequence[Recompile], guards: Sequence[GuardSet]) -> tuple[Recompile, ...]:
    """Each recompile with its reasons read (`failures`)."""
    return tuple(replace(rc, failures=failures(rc, guards)) for rc in recompiles)
