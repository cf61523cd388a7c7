"""Layouts that fit the pane's width without breaking a word.

A pane is a pure function of the report and does not know its width; Rich tells a renderable
the width when it draws it. `WordTable` sizes a table's columns then: each at least its longest
word, the columns with words to spare giving up width first. (Rich's own `Table` shrinks its
widest column first whatever its words, which is how "compile" became "compi/le" in a narrow
column beside a wide one.) `Fitted` holds a pane's layouts, richest first, and draws the first
that fits: a table too wide for its words gives way to one with fewer columns, or to rows
stacked under their names, never to broken words.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

#: Wide enough to measure any pane's natural width unclamped.
_UNBOUNDED = 100_000

Justify = Literal["left", "right"]
Cell = str | Text


def _plain(cell: Cell) -> str:
    return cell.plain if isinstance(cell, Text) else cell


def _longest_word(cell: Cell) -> int:
    return max((cell_len(word) for word in _plain(cell).split()), default=0)


def _longest_line(cell: Cell) -> int:
    return max((cell_len(line) for line in _plain(cell).splitlines()), default=0)


class WordTable:
    """A table of words (`header`, then `rows`; `total`, if any, in `total_style` at the end)
    drawn as Rich's table with `show_edge=False` (without `rules`: no rules, no padding at its
    edges), its column
    widths chosen at drawing time so that no word breaks (see the module's docstring).
    `justify` and `styles` are per column."""

    #: Each column's padding (one space either side).
    PADDING = 2

    def __init__(
        self,
        header: Sequence[str],
        rows: Sequence[Sequence[Cell]],
        *,
        justify: Sequence[Justify] | None = None,
        total: Sequence[Cell] | None = None,
        total_style: str = "bold",
        styles: Sequence[str] | None = None,
        rules: bool = True,
        header_style: str | None = None,
    ) -> None:
        self.header = tuple(header)
        self.rows = tuple(tuple(row) for row in rows)
        self.total = tuple(total) if total else None
        self.total_style = total_style
        self.justify = tuple(justify or ["left"] * len(self.header))
        self.styles = tuple(styles or [""] * len(self.header))
        self.rules = rules
        self.header_style = header_style

    def _cells(self, column: int) -> list[Cell]:
        rows = self.rows + ((self.total,) if self.total else ())
        return [self.header[column], *(row[column] for row in rows)]

    def _extra(self) -> int:
        if self.rules:
            return self.PADDING * len(self.header) + len(self.header) - 1
        # Without rules the outer edges go unpadded: the table lines up with the text above it.
        return self.PADDING * (len(self.header) - 1)

    def ranges(self) -> list[tuple[int, int]]:
        """Each column's (longest word, longest line): the least and the most it needs."""
        out = []
        for column in range(len(self.header)):
            cells = self._cells(column)
            out.append((max(map(_longest_word, cells)), max(map(_longest_line, cells))))
        return out

    def widths(self, max_width: int) -> list[int] | None:
        """The columns' widths at `max_width`: each at its longest line where all fit, else the
        columns with the most to spare narrowed first, none below its longest word; None when
        even that does not fit."""
        ranges = self.ranges()
        widths = [most for _, most in ranges]
        room = max_width - self._extra()
        if sum(least for least, _ in ranges) > room:
            return None
        excess = sum(widths) - room
        while excess > 0:
            spare = [width - least for width, (least, _) in zip(widths, ranges)]
            column = max(range(len(widths)), key=lambda i: spare[i])
            widths[column] -= 1
            excess -= 1
        return widths

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        ranges = self.ranges()
        least = sum(low for low, _ in ranges) + self._extra()
        most = sum(high for _, high in ranges) + self._extra()
        return Measurement(least, most).with_maximum(options.max_width)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        widths = self.widths(options.max_width)
        table = Table(show_edge=False, expand=False, padding=(0, 1))
        if not self.rules:
            table.box, table.pad_edge = None, False
        if self.header_style is not None:
            table.header_style = self.header_style
        for i, name in enumerate(self.header):
            width = None if widths is None else widths[i]
            # fold only where even the longest word cannot fit a line (widths is None)
            table.add_column(name, justify=self.justify[i], width=width, overflow="fold", style=self.styles[i] or None)
        for row in self.rows:
            table.add_row(*row)
        if self.total:
            table.add_row(*self.total, style=self.total_style)
        yield table


def narrowest(console: Console, options: ConsoleOptions, renderable: RenderableType) -> int:
    """The fewest columns `renderable` takes with every word whole."""
    return Measurement.get(console, options.update(max_width=_UNBOUNDED), renderable).minimum


class Fitted:
    """The first of `layouts` that fits the width with every word whole; the last otherwise
    (the leanest: its only folds are words longer than a line)."""

    def __init__(self, *layouts: RenderableType) -> None:
        if not layouts:
            raise ValueError("Fitted needs at least one layout")
        self.layouts = layouts

    def chosen(self, console: Console, options: ConsoleOptions) -> RenderableType:
        """The layout drawn at `options.max_width`."""
        for layout in self.layouts[:-1]:
            if narrowest(console, options, layout) <= options.max_width:
                return layout
        return self.layouts[-1]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.chosen(console, options)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.chosen(console, options))


def _aligned(cell: Cell, width: int, justify: Justify) -> Text:
    text = cell.copy() if isinstance(cell, Text) else Text(cell)
    pad = " " * max(0, width - cell_len(text.plain))
    return Text.assemble(text, pad) if justify == "left" else Text.assemble(pad, text)


def stacked(
    header: Sequence[str], rows: Sequence[Sequence[Cell]], *, justify: Sequence[Justify], indent: int = 2
) -> RenderableType:
    """A table whose first column is too wide to share a line: each row's first cell on a line
    of its own, the rest on the line below it, in columns under the header's words (the last
    column unpadded, so that it wraps at its words)."""
    from rich.console import Group

    rest = range(1, len(header))
    widths = {i: max(cell_len(_plain(cell)) for cell in [header[i], *(row[i] for row in rows)]) for i in rest}
    last = len(header) - 1

    def line(cells: Sequence[Cell], style: str = "") -> Text:
        out = Text(" " * indent, style=style)
        for i in rest:
            out.append_text(Text("  ") if i > 1 else Text(""))
            out.append_text(_aligned(cells[i], 0 if i == last else widths[i], justify[i]))
        return out

    # The header as the rows are: its first word on a line, the others below it.
    parts: list[RenderableType] = [Text(header[0], style="bold"), line(header, "bold")]
    for row in rows:
        first = row[0]
        parts.append(first.copy() if isinstance(first, Text) else Text(first))
        parts.append(line(row))
    return Group(*parts)
