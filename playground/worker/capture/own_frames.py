"""Our own frames out of the stacks torch writes into its log records. Worker-side.

Dynamo's "User code traceback" (and `+dynamo`'s "stack (elided N frames)") is the whole Python
stack above the traced frame: under the playground that is the worker's, then the program's or
the snippet's. `python PROG` prints the program's frames only, from its `<module>` down; a
traceback that opens with twenty frames of the template, the child and the run is ours, not the
user's, and hid theirs. Each record's text drops every frame in a file of this package (our patch
between a program's call and the compiled callable too), and the `<frozen runpy>` frames that
start the worker (`python -m`) before any other: what is left is what python prints.
"""

from __future__ import annotations

import logging
import os
import re

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


def without_own_frames(record: logging.LogRecord) -> None:
    """`record`'s message without our frames, in place (once formatted, its args are gone)."""
    try:
        text = record.getMessage()
    except Exception:  # noqa: BLE001 - a record that cannot format is left as torch made it
        return
    if ROOT in text:
        record.msg, record.args = strip(text), None


class OwnFramesOut(logging.Filter):
    """On torch's own handlers (the ones that print to stderr): every record leaves them
    without our frames."""

    def filter(self, record: logging.LogRecord) -> bool:
        without_own_frames(record)
        return True
