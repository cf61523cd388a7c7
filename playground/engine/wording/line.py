"""A line of words in tagged pieces: what a section's wording hands to every view."""

from __future__ import annotations

from dataclasses import dataclass

#: The tags a piece or a line may carry. Colour is never the only signal: a tag marks words
#: that already say what they mean, so a view may draw it or ignore it.
BAD, WARN, GOOD, DIM, HEADING = "bad", "warn", "good", "dim", "heading"
#: Advice (torch's hints): set apart from the facts around it.
HINT = "hint"
#: A name or an expression from the snippet or from torch: Markdown sets it in backticks.
CODE = "code"

Piece = tuple[str, str]  # (text, tag)


@dataclass(frozen=True)
class Line:
    """One line of words: its pieces, each with a tag ("" for none), and the whole line's tag.
    `depth` 1 is a line that belongs to the one before it (a hint under its site)."""

    pieces: tuple[Piece, ...]
    tag: str = ""
    depth: int = 0

    @classmethod
    def of(cls, *parts: str | Piece, tag: str = "", depth: int = 0) -> Line:
        """A line from plain strings and (text, tag) pairs; empty pieces dropped."""
        pieces = tuple((part, "") if isinstance(part, str) else part for part in parts)
        return cls(tuple(piece for piece in pieces if piece[0]), tag, depth)

    @property
    def text(self) -> str:
        """The words alone, as a plain-text report shows them."""
        return "".join(text for text, _ in self.pieces)


def plural(count: int, word: str, many: str | None = None) -> str:
    """ "1 graph", "2 graphs"; `many` for a plural that is not word + "s"."""
    return f"{count} {word if count == 1 else (many or word + 's')}"


def at_line(line: int | None) -> str:
    """ " (line 12)" after a fact that has a snippet line, else ""."""
    return f" (line {line})" if line else ""
