"""Shared wording and styles. Every style has a word beside it: colour is never the only signal."""

from __future__ import annotations

from rich.text import Text

BAD = "bold red"
WARN = "bold yellow"
GOOD = "green"
DIM = "dim"
HEADING = "bold"


def number(value: float | None, unit: str = "") -> str:
    """A diff or a time: compact, and `n/a` rather than blank when unknown."""
    if value is None:
        return "n/a"
    if value == 0:
        return f"0{unit}"
    if abs(value) < 1e-3 or abs(value) >= 1e5:
        return f"{value:.2e}{unit}"
    return f"{value:.4g}{unit}"


def verdict(ok: bool) -> Text:
    """pass/FAIL in words, coloured."""
    return Text("pass", style=GOOD) if ok else Text("FAIL", style=BAD)


def plural(count: int, word: str, many: str | None = None) -> str:
    return f"{count} {word if count == 1 else (many or word + 's')}"
