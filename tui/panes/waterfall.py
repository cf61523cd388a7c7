"""The save's waterfall in the Timing pane: a row per phase, its start and duration, and a bar
set at its start on the run's time line (its share of the whole from its start). The bars
take the width left, up to MAX_BAR cells; narrower than MIN_BAR, the rows keep their figures."""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.text import Text

from playground.engine.report import Report
from playground.engine.wording import save_waterfall
from tui.panes.common import DIM, HEADING

MAX_BAR = 40
MIN_BAR = 6


class Waterfall:
    """The rows of one report's waterfall, drawn to the width Rich gives them."""

    def __init__(self, rows: list[save_waterfall.WaterfallRow]) -> None:
        self.rows = rows

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        label_w = max((cell_len(r.label) for r in self.rows), default=0)
        figures = [f"{save_waterfall.ms(r.start_ms):>6} {save_waterfall.ms(r.duration_ms):>7}" for r in self.rows]
        figure_w = max((cell_len(f) for f in figures), default=0)
        used = 2 + label_w + 1 + figure_w + 2
        width = min(MAX_BAR, options.max_width - used)
        for row, figure in zip(self.rows, figures):
            line = Text("  " + row.label.ljust(label_w) + " " + figure.rjust(figure_w))
            if width >= MIN_BAR:
                start = min(round(row.start_share * width), width - 1)
                cells = max(1, round(row.share * width)) if row.duration_ms > 0 else 0
                cells = min(cells, width - start)
                line.append("  " + " " * start)
                line.append("█" * cells, style=DIM if row.label.startswith(" ") else "")
            yield line


def waterfall_parts(report: Report) -> list[RenderableType]:
    """The title (with the figures' columns), the rows, the total; nothing without a waterfall."""
    t = report.timings
    save = t.save if t is not None else None
    if save is None or not save.phases:
        return []
    return [
        Text(f"{save_waterfall.TITLE}: start, duration", style=HEADING),
        Waterfall(save_waterfall.rows(save)),
        Text("  " + save_waterfall.total_words(save), style=DIM),
    ]
