"""Dynamo's transformed code as torch wrote it, listed by `dis`: what the Code pane shows where
depyf cannot decompile a frame (depyf 0.20 on Python 3.12 and 3.13: thuml/depyf#90 and #86,
`SWAP` and the other new opcodes). The code objects come from torch's own bytecode hook
(compat.transformed_code_recorded). Worker-side; needs no torch.
"""

from __future__ import annotations

import dis
import sys
from typing import Any

from playground.worker.dynamo_code import depyf_dump

#: What the item's source says of itself when it is the bytecode, not depyf's Python.
BYTECODE = "# the transformed bytecode as torch wrote it (dis, Python {python}): depyf could not decompile it\n"


def listing(code: Any) -> str:
    """`code` as `dis` lists it, with the code objects it holds (a nested function's)."""
    return BYTECODE.format(python=_python()) + dis.Bytecode(code).dis()


def filled(items: list[dict[str, Any]], recorded: list[tuple[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """depyf's items with each transformed code it could not decompile replaced by its bytecode
    listing (the entry-th code Dynamo wrote for that frame, as depyf numbers them), and how many."""
    by_frame = _by_frame(recorded)
    out, shown = [], 0
    for item in items:
        code = _code_of(item, by_frame)
        if code is not None and item["source"].startswith(depyf_dump.UNDECOMPILED):
            item = {**item, "source": listing(code)}
            shown += 1
        out.append(item)
    return out, shown


def items_of(recorded: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    """One transformed item per code Dynamo wrote, where depyf wrote nothing at all."""
    items = []
    for frame, codes in _by_frame(recorded).items():
        for entry, code in enumerate(codes):
            items.append(
                {
                    "name": f"__transformed_code_{entry}_for_{frame}",
                    "kind": "transformed",
                    "function": frame,
                    "resumes_at_line": _resume_line(frame),
                    "entry": entry,
                    "source": listing(code),
                }
            )
    return sorted(items, key=lambda i: (i["resumes_at_line"] is not None, i["resumes_at_line"] or 0, i["entry"]))


def note(shown: int, of: int) -> str:
    """What the note adds where some code is the bytecode: said as a failure, so it is warned."""
    return (
        f"; depyf failed to decompile {shown} of {of} transformed code objects on Python {_python()}:"
        " each is shown as torch wrote it, listed by dis"
    )


def _by_frame(recorded: list[tuple[str, Any]]) -> dict[str, list[Any]]:
    by_frame: dict[str, list[Any]] = {}
    for frame, code in recorded:
        by_frame.setdefault(frame, []).append(code)
    return by_frame


def _code_of(item: dict[str, Any], by_frame: dict[str, list[Any]]) -> Any:
    if item["kind"] != "transformed" or item.get("entry") is None:
        return None
    codes = by_frame.get(item["function"], [])
    return codes[item["entry"]] if item["entry"] < len(codes) else None


def _resume_line(frame: str) -> int | None:
    match = depyf_dump.RESUME_FRAME.match(frame)
    return int(match.group("line")) if match else None


def _python() -> str:
    return f"{sys.version_info.major}.{sys.version_info.minor}"
