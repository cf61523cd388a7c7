"""The settings matrix and the ablation ladder without the app: the rows, the detail line, the
title and the verdict as pure functions of the cells' settings, states and results (the screen,
tui/screens/matrix.py, draws them and runs the cells)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from rich.text import Text

from playground.engine.matrix import Cell, compile_split_words, ladder_stages, ladder_summary, remaining_words
from playground.engine.settings import Settings, dynamic_name
from playground.engine.textsafe import visible
from tui.panes.common import BAD, DIM, GOOD, WARN

#: (key, header, right-aligned). Short headers: eleven columns must fit 80 terminal columns.
COLUMNS: tuple[tuple[str, str, bool], ...] = (
    ("backend", "backend", False),
    ("fg", "fg", False),
    ("dyn", "dyn", False),
    ("graphs", "graphs", True),
    ("breaks", "breaks", True),
    ("recomp", "recomp", True),
    ("limit", "limit", False),
    ("equiv", "equiv", False),
    ("compile", "compile", True),
    ("speedup", "speedup", True),
    ("raised", "raised", False),
)
#: The ladder's columns: fullgraph and dynamic are the same on every stage (in the title), the
#: stage name is long; what tells the stages apart is equivalence, the difference and where the
#: compile time goes. Seven columns fit 80 terminal columns.
LADDER_COLUMNS: tuple[tuple[str, str, bool], ...] = (
    ("backend", "stage", False),
    ("graphs", "graphs", True),
    ("equiv", "equiv", False),
    ("max_abs", "max abs", True),
    ("dynamo", "Dynamo", True),
    ("backend_s", "backend", True),
    ("raised", "raised", False),
)
#: The raised column shows the exception's first words (its type, when the whole does not
#: fit); the line under the table has it all. 11: the eleven columns then fill 80 exactly.
RAISED_WIDTH = 11


def stage_name(settings: Settings) -> str:
    """The backend, with the inductor mode when one is set: a ladder stage's name."""
    return (
        f"{settings.backend} {settings.mode}" if settings.mode and settings.backend == "inductor" else settings.backend
    )


def cell_label(settings: Settings) -> str:
    """ "inductor fullgraph=on dynamic=false": the part of the settings the matrix varies."""
    return (
        f"{settings.backend} fullgraph={'on' if settings.fullgraph else 'off'} dynamic={dynamic_name(settings.dynamic)}"
    )


def _padded(value: str, right: bool, style: str = "") -> Text:
    # No cell padding in the table (it would cost 22 columns): one leading space separates.
    return Text(f" {value}", style=style, justify="right" if right else "left", no_wrap=True)


def _seconds(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:.1f}s" if value >= 10 else f"{value:.2f}s"


def _first_words(raised: str, width: int = RAISED_WIDTH) -> str:
    if len(raised) <= width:
        return raised
    kind = raised.split(":", 1)[0]
    return kind if len(kind) <= width else kind[: width - 1] + "…"


def ladder_row_cells(settings: Settings, cell: Cell | None, state: str) -> dict[str, Text]:
    """One ladder row (LADDER_COLUMNS); unfinished rows carry their state as row_cells does."""
    values = {"backend": _padded(stage_name(settings), False)}
    if cell is None:
        blank = {key: _padded("", right) for key, _, right in LADDER_COLUMNS if key not in values}
        return values | blank | {"raised": _padded(state, False, DIM if state == "waiting" else WARN)}
    size = "" if cell.max_abs is None else f"{cell.max_abs:.3g}"
    return values | {
        "graphs": _padded(str(cell.graphs), True),
        "equiv": _padded(cell.equivalence, False, BAD if cell.equivalence == "FAIL" else ""),
        "max_abs": _padded(size, True, BAD if cell.diverged else ""),
        "dynamo": _padded(_seconds(cell.dynamo_s), True),
        "backend_s": _padded(_seconds(cell.backend_s), True),
        "raised": _padded(_first_words(cell.raised) if cell.raised else "no", False, BAD if cell.raised else GOOD),
    }


def row_cells(settings: Settings, cell: Cell | None, state: str) -> dict[str, Text]:
    """One table row. Unfinished rows carry their state (waiting, running…, not run) in words
    in the raised column: the other result columns stay blank until there is a result."""
    values = {
        "backend": _padded(stage_name(settings), False),
        "fg": _padded("on" if settings.fullgraph else "off", False),
        "dyn": _padded(dynamic_name(settings.dynamic), False),
    }
    if cell is None:
        blank = {key: _padded("", right) for key, _, right in COLUMNS if key not in values}
        return values | blank | {"raised": _padded(state, False, DIM if state == "waiting" else WARN)}
    speedup = cell.speedup_word or "n/a"
    return values | {
        "graphs": _padded(str(cell.graphs), True),
        "breaks": _padded(str(cell.breaks), True, WARN if cell.breaks else ""),
        "recomp": _padded(str(cell.recompiles), True, WARN if cell.recompiles else ""),
        "limit": _padded("HIT" if cell.limit_hit else "no", False, BAD if cell.limit_hit else ""),
        "equiv": _padded(cell.equivalence, False, BAD if cell.equivalence == "FAIL" else ""),
        "compile": _padded(_seconds(cell.compile_s), True),
        "speedup": _padded(speedup, True),
        "raised": _padded(_first_words(cell.raised) if cell.raised else "no", False, BAD if cell.raised else GOOD),
    }


def detail_text(settings: Settings, cell: Cell | None, state: str) -> Text:
    """The highlighted row in full sentences: the table's columns are cut to fit 80."""
    text = Text(f"{cell_label(settings)}: ", style="bold")
    if cell is None:
        text.append(state)
        return text
    if cell.raised:
        kind = f" ({cell.error_kind} error)" if cell.error_kind else ""
        text.append(f"raised{kind} {cell.raised}", style=BAD)
        return text
    if cell.diverged:
        size = "" if cell.max_abs is None else f" (max abs {cell.max_abs:.3g}, rel {cell.max_rel or 0:.3g})"
        text.append(f"{cell.diverged} differ from eager{size}  ", style=BAD)
    text.append(
        f"graphs {cell.graphs}  breaks {cell.breaks}  recompiles {cell.recompiles}  "
        f"recompile limit {'HIT' if cell.limit_hit else 'not hit'}  equiv {cell.equivalence}  "
        f"compile {_seconds(cell.compile_s)} (first call){_compile_split_words(cell)}  speedup "
        + (cell.speedup_word or "n/a")
    )
    return text


def _compile_split_words(cell: Cell) -> str:
    """ "; all compiles: Dynamo 0.19s, backend 1.84s": every compile of the run by phase, from
    torch's metrics; recompiles included, so it can exceed the first call's compile beside it."""
    if not compile_split_words(cell):
        return ""
    return f"; all compiles: Dynamo {_seconds(cell.dynamo_s)}, backend {_seconds(cell.backend_s)}"


@dataclass
class MatrixRun:
    """One matrix (or ladder) on the screen: the settings of each row, what state each row is
    in, and the results that came back, by row index."""

    path: Path
    cells: list[Settings]
    #: Whether the rows are the ablation ladder's stages rather than the matrix's cells.
    ladder: bool = False
    #: The app's settings: the ladder runs under them (the matrix's first cell has its own
    #: fullgraph and dynamic, not the snippet's).
    base: Settings | None = None
    results: dict[int, Cell] = field(default_factory=dict)
    #: Each row's state in words: waiting, running…, done, cancelled, not run.
    states: list[str] = field(init=False)

    def __post_init__(self) -> None:
        self.states = ["waiting"] * len(self.cells)

    def as_ladder(self) -> MatrixRun:
        """The ladder under the matrix's base settings (its other switches kept), nothing run yet."""
        base = self.base or (self.cells[0] if self.cells else Settings())
        return MatrixRun(self.path, ladder_stages(base), ladder=True, base=self.base)

    def headers(self) -> list[tuple[str, Text]]:
        """(column key, header) of each column of the table."""
        columns = LADDER_COLUMNS if self.ladder else COLUMNS
        return [(key, _padded(header, right, "bold")) for key, header, right in columns]

    def title(self) -> str:
        base = (self.base if self.ladder else None) or (self.cells[0] if self.cells else Settings())
        if self.ladder:
            title = f"ablation ladder: {self.path.name}  {len(self.cells)} stages on {base.device}"
            title += f", fullgraph={'on' if base.fullgraph else 'off'} dynamic={dynamic_name(base.dynamic)}"
        else:
            title = f"settings matrix: {self.path.name}  {len(self.cells)} runs on {base.device}"
            if any(s.backend == "inductor" for s in self.cells):
                title += f", inductor mode {base.mode or 'default'}"
        switches = base.switch_words()
        return title + (f"  {' '.join(switches)}" if switches else "")

    def hint(self) -> str:
        if self.ladder:
            return (
                "equiv eager vs compiled (under the snippet's TOLERANCE), max abs the largest difference, "
                "Dynamo/backend compile seconds by phase; the highlighted row is spelled out above"
            )
        return (
            "fg fullgraph, dyn dynamic, recomp recompiles, limit recompile limit hit, equiv eager "
            "vs compiled; the highlighted row is spelled out above"
        )

    def row(self, index: int) -> dict[str, Text]:
        rows = ladder_row_cells if self.ladder else row_cells
        return rows(self.cells[index], self.results.get(index), self.states[index])

    def detail(self, index: int) -> Text | None:
        """Row `index` in full sentences; None for no row."""
        if 0 <= index < len(self.cells):
            return detail_text(self.cells[index], self.results.get(index), self.states[index])
        return None

    def verdict(self) -> Text | None:
        """The ladder's verdict on the stages finished so far; None for the matrix."""
        if not self.ladder:
            return None
        done = [self.results[i] for i in sorted(self.results)]
        verdict = ladder_summary(done, len(self.cells))
        style = BAD if verdict.startswith("first divergence") else GOOD if done else DIM
        return Text(verdict, style=style)

    def started(self, index: int) -> str:
        """Row `index` is running; the words for the state bar."""
        self.states[index] = "running…"
        left = remaining_words([self.results[i] for i in sorted(self.results)], len(self.cells) - index)
        return f"running {index + 1}/{len(self.cells)}: {cell_label(self.cells[index])}" + (f"; {left}" if left else "")

    def finished(self, index: int, cell: Cell) -> None:
        # The exception message is the snippet's: its control characters are made visible.
        self.results[index] = replace(cell, raised=visible(cell.raised)) if cell.raised else cell
        self.states[index] = "done"

    def ended(self, cancelled: bool, seconds: float) -> tuple[list[int], str]:
        """No more rows will run: the rows without a result (now cancelled or not run) and the
        words for the state bar."""
        done = len(self.results)
        unfinished = []
        for index, state in enumerate(self.states):
            if index not in self.results:
                self.states[index] = "cancelled" if state == "running…" else "not run"
                unfinished.append(index)
        if cancelled:
            return unfinished, f"cancelled after {done}/{len(self.cells)}: finished rows kept; escape closes"
        return unfinished, f"done: {done}/{len(self.cells)} in {seconds:.1f} s; escape closes and reruns"
