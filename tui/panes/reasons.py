"""Recompile reasons as torch logs them: "1/0: <failed guard>  # <source>", each possibly
followed by context lines ("User stack trace:", a File line, the code) that belong to it."""

from __future__ import annotations

import re
from dataclasses import dataclass

_HEAD = re.compile(r"^\s*(?P<cid>\d+/\d+):\s*(?P<text>.*)$")
_LOCAL = re.compile(r"L\['([^']+)'\]")


@dataclass(frozen=True)
class Reason:
    """One guard failure: the entry it failed against, the failed check, its context."""

    compile_id: str | None
    text: str
    context: tuple[str, ...] = ()

    @property
    def expression(self) -> str:
        """The check without torch's trailing `# source` comment."""
        return strip_comment(self.text)


def strip_comment(text: str) -> str:
    return split_comment(text)[0]


def split_comment(text: str) -> tuple[str, str]:
    """(the check, torch's `# source line` comment), the log's column padding removed."""
    parts = re.split(r"\s{2,}#|\s#\s", text, maxsplit=1)
    comment = f"# {parts[1].strip()}" if len(parts) > 1 else ""
    return parts[0].strip(), comment


def normalize(expression: str) -> str:
    """`L['x'] == 1` and `x == 1` name the same check: the log drops the `L[...]`."""
    return re.sub(r"\s+", " ", _LOCAL.sub(r"\1", expression)).strip()


def parse_reasons(lines: tuple[str, ...] | list[str]) -> list[Reason]:
    """Group raw reason lines into failures; lines before any `N/M:` head stand alone."""
    reasons: list[Reason] = []
    for line in lines:
        match = _HEAD.match(line)
        if match:
            reasons.append(Reason(match["cid"], match["text"].strip()))
        elif reasons:
            last = reasons[-1]
            reasons[-1] = Reason(last.compile_id, last.text, (*last.context, line.strip()))
        elif line.strip():
            reasons.append(Reason(None, line.strip()))
    return reasons
