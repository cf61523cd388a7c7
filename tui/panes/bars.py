"""Shares drawn as bars, the figures always written beside them: a bar is read at a glance,
the number is what a monochrome projector, a screen reader or a copied screen keeps."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.text import Text

#: A cell's eighths, from one eighth to seven (a whole cell is FULL).
_EIGHTHS = "▏▎▍▌▋▊▉"
FULL = "█"


def bar(fraction: float, width: int) -> str:
    """`fraction` (0 to 1) of `width` cells, in eighths of a cell; any share above zero shows
    at least an eighth, so a phase or a kernel that took time is seen to exist."""
    fraction = min(max(fraction, 0.0), 1.0)
    eighths = round(fraction * width * 8)
    if fraction > 0 and eighths == 0:
        eighths = 1
    whole, part = divmod(eighths, 8)
    return FULL * whole + (_EIGHTHS[part - 1] if part else "")


def share_words(fraction: float) -> str:
    """A share as a whole percentage: "98%", "<1%" for a sliver, "0%" for nothing."""
    if 0 < fraction < 0.005:
        return "<1%"
    return f"{fraction:.0%}"


@dataclass(frozen=True)
class BarRow:
    """One bar: its `label`, the `figure` it stands for ("6.323 s"), its `share` of the whole
    (0 to 1; None: a row with its figure and no bar, such as a total)."""

    label: str
    figure: str
    share: float | None = None
    style: str = ""


class BarChart:
    """Rows of label, figure, share and bar, in columns; the bar takes the width left, up to
    `max_bar` cells. Narrower than `min_bar` cells for the bar, the rows keep their figures and
    drop the bars."""

    def __init__(
        self,
        rows: Sequence[BarRow],
        *,
        indent: int = 2,
        max_bar: int = 40,
        min_bar: int = 6,
        bar_style: str = "",
    ) -> None:
        self.rows = tuple(rows)
        self.indent = indent
        self.max_bar = max_bar
        self.min_bar = min_bar
        self.bar_style = bar_style

    def _fixed(self) -> int:
        """The columns before the bar: indent, label, figure, share, a space between each."""
        label = max((cell_len(r.label) for r in self.rows), default=0)
        figure = max((cell_len(r.figure) for r in self.rows), default=0)
        return self.indent + label + 1 + figure + 1 + 4 + 1

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        fixed = self._fixed()
        return Measurement(fixed - 1, fixed + self.max_bar).with_maximum(options.max_width)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        label = max((cell_len(r.label) for r in self.rows), default=0)
        figure = max((cell_len(r.figure) for r in self.rows), default=0)
        room = min(self.max_bar, options.max_width - self._fixed())
        for row in self.rows:
            line = Text(" " * self.indent, style=row.style, no_wrap=True, overflow="crop")
            line.append(row.label.ljust(label))
            line.append(" " + row.figure.rjust(figure))
            if row.share is not None:
                line.append(" " + share_words(row.share).rjust(4))
                if room >= self.min_bar:
                    line.append(" " + bar(row.share, room), style=self.bar_style)
            yield line
