"""The code Dynamo wrote, read back from what depyf dumped: torch-free text parsing.

depyf's `prepare_debug(dir)` writes one `full_code_for_<fn>_N.py` per compiled function. Each
holds sections ending in `#============ end of NAME ============#`, one per code object Dynamo
compiled (the function itself, then every resume function after a graph break), and in each
section: the guard function of every cache entry (`__guard_K_for_<frame>`), the transformed
bytecode decompiled (`__transformed_code_K_for_<frame>`), stubs for the compiled graphs, the
original code (for a resume function: Dynamo's `__resume_at_<offset>_<n>`, decompiled) and a
dispatcher (`transformed_<name>`). We keep the transformed code, the resume functions and the
guards; the rest is scaffolding. Measured with depyf 0.20 on torch 2.13.
"""

from __future__ import annotations

import os
import re
from typing import Any

_SECTION_END = re.compile(r"^#=+ end of (?P<name>\S+) =+#\s*$")
_DEF = re.compile(r"^def (?P<name>[A-Za-z_][A-Za-z0-9_]*)\(")
_GUARD = re.compile(r"^__guard_(?P<k>\d+)_for_(?P<frame>\w+)$")
_TRANSFORMED = re.compile(r"^__transformed_code_(?P<k>\d+)_for_(?P<frame>\w+)$")
#: Where depyf could not decompile a frame's bytecode (torch 2.13's `SWAP` in a module's forward
#: that breaks), it names the pair without the frame, `guard_K` and `transformed_code_K`, in the
#: frame's own section, and the code's body is the string 'Failed to decompile.'.
_BARE_GUARD = re.compile(r"^guard_(?P<k>\d+)$")
_BARE_TRANSFORMED = re.compile(r"^transformed_code_(?P<k>\d+)$")
#: What the item's source says instead of depyf's bare docstring.
UNDECOMPILED = "# depyf could not decompile this frame's transformed bytecode; its guard is below\n"
#: torch names a resume function after the frame and the line of the break it resumes after.
RESUME_FRAME = re.compile(r"^torch_dynamo_resume_in_(?P<fn>\w+?)_at_(?P<line>\d+)$")
_KIND_ORDER = {"transformed": 0, "resume": 1, "guard": 2}


def read_dump(directory: str, snippet_path: str = "") -> list[dict[str, Any]]:
    """Every transformed code, resume function and guard function depyf wrote into
    `directory`, as {name, kind, function, resumes_at_line, entry, source}: the compiled
    function's own frame first, then each resume function in line order."""
    try:
        names = sorted(n for n in os.listdir(directory) if n.startswith("full_code_for_") and n.endswith(".py"))
    except OSError:
        return []
    items: list[dict[str, Any]] = []
    for name in names:
        try:
            with open(os.path.join(directory, name), encoding="utf-8") as fh:
                items += parse_full_code(fh.read())
        except (OSError, UnicodeDecodeError):
            continue
    return sorted(items, key=_order)


def _order(item: dict[str, Any]) -> tuple[int, int, int, int]:
    line = item.get("resumes_at_line")
    return (0 if line is None else 1, line or 0, _KIND_ORDER.get(item["kind"], 3), item.get("entry") or 0)


def parse_full_code(text: str) -> list[dict[str, Any]]:
    """One `full_code_for_*.py` file as items (see read_dump)."""
    items: list[dict[str, Any]] = []
    for section_name, blocks in _sections(text):
        frame = ""
        for name, _ in blocks:
            match = _TRANSFORMED.match(name) or _GUARD.match(name)
            if match:
                frame = match.group("frame")
                break
            if _BARE_TRANSFORMED.match(name) or _BARE_GUARD.match(name):
                frame = section_name
                break
        resume = RESUME_FRAME.match(frame)
        at_line = int(resume.group("line")) if resume else None
        for name, source in blocks:
            transformed = _TRANSFORMED.match(name) or _BARE_TRANSFORMED.match(name)
            guard = _GUARD.match(name) or _BARE_GUARD.match(name)
            if transformed:
                kind, entry = "transformed", int(transformed.group("k"))
                name = f"__transformed_code_{entry}_for_{frame}"
                if "'Failed to decompile.'" in source:
                    source = UNDECOMPILED + source
            elif guard:
                kind, entry = "guard", int(guard.group("k"))
                name = f"__guard_{entry}_for_{frame}"
            elif name == section_name and resume:
                kind, entry = "resume", None
            else:
                continue  # graph stubs, the user's own code, the dispatcher
            items.append(
                {
                    "name": frame if kind == "resume" else name,
                    "kind": kind,
                    "function": frame or section_name,
                    "resumes_at_line": at_line,
                    "entry": entry,
                    "source": source.rstrip() + "\n",
                }
            )
    return items


def _sections(text: str) -> list[tuple[str, list[tuple[str, str]]]]:
    """(section name, [(def name, its source)]) per `end of NAME` section."""
    sections: list[tuple[str, list[tuple[str, str]]]] = []
    blocks: list[tuple[str, str]] = []
    current: list[str] | None = None
    current_name = ""
    for line in text.splitlines():
        end = _SECTION_END.match(line)
        top_level = bool(line) and not line[0].isspace()
        if current is not None and (end or top_level):
            blocks.append((current_name, "\n".join(current)))
            current = None
        if end:
            sections.append((end.group("name"), blocks))
            blocks = []
            continue
        start = _DEF.match(line)
        if start:
            current, current_name = [line], start.group("name")
        elif current is not None:
            current.append(line)
    return sections
