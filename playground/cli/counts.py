"""Counts as a user types them on the command line."""

from __future__ import annotations


def whole_number(text: str) -> int | None:
    """`text` as a whole number written in ASCII digits ("12", " 12 "), else None. Python's int()
    also takes "1_0" and other scripts' digits ("١٢"), which no user means as a count."""
    stripped = text.strip() if isinstance(text, str) else ""
    if not stripped.isascii() or not stripped.isdigit():
        return None
    return int(stripped)
