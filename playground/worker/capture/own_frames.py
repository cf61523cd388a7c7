"""Our own frames out of the stacks torch writes into its log records. Worker-side.

Dynamo's "User code traceback" (and `+dynamo`'s "stack (elided N frames)") is the whole Python
stack above the traced frame: under the playground that is the worker's, then the program's or
the snippet's. `python PROG` prints the program's frames only, from its `<module>` down; a
traceback that opens with twenty frames of the template, the child and the run is ours, not the
user's, and hid theirs. Each record's text drops every frame in a file of this package (our patch
between a program's call and the compiled callable too), and the `<frozen runpy>` frames that
start the worker (`python -m`) before any other: what is left is what python prints. The
structured trace (`--trace DIR`) the same way: dynamo_start's stack, a graph break's payload, the
interned names of our files.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import sys
from collections.abc import Callable
from typing import Any

#: This package's folder: a frame in a file under it is ours.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep

_FRAME = re.compile(r'(?P<indent>[ \t]*)File "(?P<file>[^"\n]*)", line \d+')
_RUNPY = "<frozen runpy>"


def strip(text: str) -> str:
    """`text` without our frames (each frame: its `File` line and the lines indented under it)."""
    if ROOT not in text:
        return text
    out: list[str] = []
    skip_under: int | None = None  # dropping the lines indented deeper than this
    kept_one = False  # a frame of someone else's met in this stack: runpy is theirs then
    for line in text.splitlines(keepends=True):
        frame = _FRAME.match(line)
        indent = len(line) - len(line.lstrip(" \t"))
        if frame is None and skip_under is not None and indent > skip_under and line.strip():
            continue  # the dropped frame's code and carets
        skip_under = None
        if frame is None:
            if line.strip():
                kept_one = False  # not a stack's line: the next stack starts afresh
            out.append(line)
            continue
        file = frame.group("file")
        if file.startswith(ROOT) or (file == _RUNPY and not kept_one):
            skip_under = len(frame.group("indent"))
            continue
        kept_one = True
        out.append(line)
    return "".join(out)


def without_own_frames(record: logging.LogRecord) -> str:
    """`record`'s message without our frames, in place (once formatted, its args are gone); the
    message, formatted once here for the caller too. A record that cannot format is left as
    torch made it, and its error is the caller's to meet."""
    try:
        text = record.getMessage()
    except Exception:  # noqa: BLE001
        return ""
    if ROOT in text:
        text = strip(text)
        record.msg, record.args = text, None
    return text


class OwnFramesOut(logging.Filter):
    """On torch's own handlers (the ones that print to stderr): every record leaves them
    without our frames."""

    def filter(self, record: logging.LogRecord) -> bool:
        without_own_frames(record)
        return True


def _ours(filename: str) -> bool:
    return filename.startswith(ROOT)


def trace_record(
    metadata: dict[str, Any], payload: str | None, table: Callable[[], list[tuple[str, int]]]
) -> tuple[dict[str, Any], str | None] | None:
    """One structured-trace record as TORCH_TRACE holds it for `python PROG` (None: it has no
    place there): a dynamo_start's stack without our frames, a payload's traceback without
    them (its md5 made again, as torch makes it), and no interned name of our files. `table`:
    torch's interned file names and their numbers."""
    interned = metadata.get("str")
    if isinstance(interned, list) and interned and isinstance(interned[0], str) and _ours(interned[0]):
        return None
    start = metadata.get("dynamo_start")
    if isinstance(start, dict) and isinstance(start.get("stack"), list) and start["stack"]:
        names = {index: text for text, index in table()}
        *above, code = start["stack"]
        metadata = {**metadata, "dynamo_start": {**start, "stack": [*_python_stack(above, names), code]}}
    if isinstance(payload, str) and ROOT in payload:
        payload = strip(payload)
        metadata = {**metadata, "has_payload": hashlib.md5(payload.encode("utf-8"), usedforsecurity=False).hexdigest()}
    return metadata, payload


def trace_names(table: list[tuple[str, int]]) -> list[tuple[str, int]]:
    """torch's table of interned file names less ours (a trace's header)."""
    return [(text, index) for text, index in table if not _ours(text)]


def _python_stack(above: list[Any], names: dict[int, str]) -> list[Any]:
    """dynamo_start's frames above the compiled code as `python PROG` logs them. torch keeps the
    stack less its innermost frames, a fixed count meant for its own and, measured on 2.13, one
    more: the compiled callable's caller. Under us that caller is our patch's frame, so the
    program's own caller stayed. The live stack says which frames torch kept (`above` is its
    outer part); python's are the same count dropped from it once ours are gone."""
    live = _live_stack_above("log_dynamo_start")
    if live is None or len(live) < len(above) or not _same(above, live, names):
        # Not the stack we know: our frames out, nothing more.
        return [f for f in above if not (isinstance(f, dict) and _ours(str(names.get(f.get("filename"), ""))))]
    dropped = len(live) - len(above)
    theirs = [i for i, name in enumerate(live) if _theirs(name, i, live)]
    return [above[i] for i in theirs[: max(0, len(theirs) - dropped)]]


def _theirs(name: str, index: int, live: list[str]) -> bool:
    """A frame that is not ours: not in this package, nor the worker's leading runpy frames."""
    return not _ours(name) and not (name == _RUNPY and all(n == _RUNPY for n in live[:index]))


def _live_stack_above(function: str) -> list[str] | None:
    """The file names of the frames above torch's `function` (outermost first), None when it
    is not on the stack."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_name != function:
        frame = frame.f_back
    if frame is None:
        return None
    names = []
    frame = frame.f_back
    while frame is not None:
        names.append(frame.f_code.co_filename)
        frame = frame.f_back
    return names[::-1]


def _same(above: list[Any], live: list[str], names: dict[int, str]) -> bool:
    """Whether torch's frames are the live stack's outermost ones, file for file."""
    return all(isinstance(f, dict) and names.get(f.get("filename")) == live[i] for i, f in enumerate(above))
