"""The Source pane's line cursor (key l): where it lands, how far an arrow moves it, and where
its line sits among the pane's rendered rows, so the screen can scroll it into view.

The rows are found in what the pane has already rendered (its line number is the one drawn in
`CURSOR` style), not by rendering the snippet again down to the cursor: that costs a whole
Rich layout of the snippet per arrow press, three times what the move itself costs.
"""

from __future__ import annotations

from collections.abc import Sequence

from textual.strip import Strip

from playground.engine.report import Report, RunError
from playground.engine.wording import compiled
from tui.panes.source import first_mark


def start(report: Report | None, error: RunError | None) -> int:
    """Where the cursor first lands: the first line a kernel holds, else the error's or the
    first break's line, else line 1."""
    kernel_lines = sorted(compiled.kernels_by_line(report)) if report is not None else []
    return kernel_lines[0] if kernel_lines else first_mark(report, error) or 1


def line_count(source: str) -> int:
    """The snippet's lines as the Source pane numbers them (a final newline ends the last)."""
    return source.count("\n") + (0 if source.endswith("\n") else 1)


def moved(cursor: int, step: int, source: str) -> int:
    """The cursor `step` lines on, kept on the snippet (which an edit may have shortened)."""
    lines = line_count(source)
    return max(1, min(lines, min(cursor, lines) + step))


def _number(strip: Strip) -> tuple[str, bool]:
    """The row's first word and whether it is drawn reversed (the cursor's line number)."""
    for segment in strip:
        text = segment.text.strip()
        if text:
            return text.split()[0], bool(segment.style and segment.style.reverse)
    return "", False


def rows(strips: Sequence[Strip], cursor: int) -> tuple[int, int] | None:
    """The rows [top, bottom) of the cursor's line, its marks and its kernels; None when the
    rendered rows do not hold it (not drawn yet, or drawn without the cursor)."""
    number = str(cursor)
    top = next((y for y, strip in enumerate(strips) if _number(strip) == (number, True)), None)
    if top is None:
        return None
    # The block ends at the next numbered row: every row of the block leaves the number blank.
    following = str(cursor + 1)
    bottom = next((y for y in range(top + 1, len(strips)) if _number(strips[y])[0] == following), len(strips))
    return top, bottom
