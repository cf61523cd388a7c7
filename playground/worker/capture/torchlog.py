"""torch's log records as the capture keeps them, and what more than one reader of them needs:
the patterns of a recompile and of a hit recompile_limit.
Worker-side (no torch import of its own: the records arrive through logging)."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

#: The file may hold a newline (a snippet named so): `.` spans it, as in a break's head.
RECOMPILE_HEAD = re.compile(r"Recompiling function (?P<fn>\S+) in (?P<file>.*?):(?P<line>\d+)", re.S)
COMPILE_ID = re.compile(r"\[(\d+/\d+)(?:_\d+)?\]")
LIMIT = re.compile(r"hit config\.(?P<kind>\w+) \((?P<n>\d+)\)\n\s*function: '(?P<fn>[^']*)' \((?P<loc>[^)]*)\)")


@dataclass
class LogRecord:
    artifact: str | None
    message: str
    formatted: str
    name: str
    levelno: int


def hit_limit(record: LogRecord) -> bool:
    """Whether `record` is torch's warning that a frame hit recompile_limit."""
    return record.levelno >= logging.WARNING and LIMIT.search(record.message) is not None
