"""The snippet, highlighted, with the lines torch talked about marked in the gutter.

A mark is a letter (B break, R recompile, E error, K kernels, G guards) and the reason sits on
the row below the line, in words: readable on a monochrome projector and without a mouse to
hover with. The line cursor (key l) has its line number in reverse video and, below its marks,
the kernels of that line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePath

from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from playground.engine.program import callable_key
from playground.engine.report import GraphBreak, Recompile, Report, RunError
from playground.engine.wording import compiled
from playground.engine.wording.errors import FULL_WIDTH
from tui.panes.common import BAD, DIM, WARN, plural, styled
from tui.run.findings import refusal_words, refused_break

#: The kernels' mark: set apart from the findings (B, R, E) and from the guards' dim G.
KERNEL = "bold cyan"
#: The cursor line's number: reverse video, so it shows without colour.
CURSOR = "reverse bold"


@dataclass(frozen=True)
class Mark:
    letter: str
    style: str
    label: str


def line_marks(report: Report | None, error: RunError | None) -> dict[int, list[Mark]]:
    """The marks for each 1-based line of the snippet."""
    marks: dict[int, list[Mark]] = {}
    if report is not None:
        for site in report.graph_breaks:
            if site.line:
                times = f" ×{site.count}" if site.count > 1 else ""
                marks.setdefault(site.line, []).append(Mark("B", BAD, f"BREAK{times}: {site.reason}"))
        # One mark per function, not per recompile: eight of them would bury the code.
        by_line: dict[int, list[Recompile]] = {}
        for recompile in report.recompiles:
            if recompile.line:
                by_line.setdefault(recompile.line, []).append(recompile)
        for line, recompiles in by_line.items():
            latest = recompiles[-1]
            reason = latest.failures[0].check if latest.failures else "guard failed"
            label = f"RECOMPILED ×{len(recompiles)} ({latest.function}); last: {reason}"
            marks.setdefault(line, []).append(Mark("R", WARN, label))
        # K: a line whose ops a profiled kernel holds; before G, whose line it often shares.
        for line, kernels in sorted(compiled.kernels_by_line(report).items()):
            marks.setdefault(line, []).append(Mark("K", KERNEL, compiled.line_kernel_label(kernels, line)))
        # G: a line that made guards; the guards ride on the row below, as breaks do.
        guard_lines: dict[int, list[tuple[int, str]]] = {}
        for entry in report.explanation.guards[:1]:
            for g in entry.guards:
                if g.line and not g.internal:
                    guard_lines.setdefault(g.line, []).append((g.rank, g.arg or g.check))
        for line, ranked in guard_lines.items():
            # What the next call or edit can make fail first (shapes, values), then structure.
            args = [arg for _, arg in sorted(ranked, key=lambda pair: pair[0])]
            label = "GUARDS on " + ", ".join(dict.fromkeys(a for a in args if a))
            marks.setdefault(line, []).append(Mark("G", DIM, label))
    refused = _refused(report, error)
    if refused is not None and refused.line:
        # fullgraph=True's refusal is this run's break: marked as one, with what refused it.
        gb = f" [{refused.gb_id}]" if refused.gb_id else ""
        label = f"REFUSED by fullgraph=True: {_shorten(refused.reason, 90)}{gb}"
        marks.setdefault(refused.line, []).append(Mark("B", BAD, label))
    elif error is not None and error.line:
        # The full message heads the pane; beside the line a short form keeps the code legible.
        message = _shorten(error.message.splitlines()[0] if error.message else "", 90)
        marks.setdefault(error.line, []).insert(0, Mark("E", BAD, f"ERROR ({error.kind}) {error.type}: {message}"))
    return marks


def _refused(report: Report | None, error: RunError | None) -> GraphBreak | None:
    """The refused break when `error` is the shown report's own fullgraph refusal."""
    return refused_break(report) if report is not None and error is not None and report.error == error else None


def _shorten(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def first_mark(report: Report | None, error: RunError | None, picked: str | None = None) -> int | None:
    """The line to bring into view: the compiled callable `o` picked (where the program made
    it, when in this file), else the error's, else the first break's."""
    if picked is not None and report is not None and report.kind == "program":
        names = [made.name for made in report.callables]
        for made in report.callables:
            same_file = not made.file or not report.snippet or PurePath(made.file).name == PurePath(report.snippet).name
            if callable_key(made.name, made.index, names) == picked and made.line and same_file:
                return made.line
    if error is not None and error.line:
        return error.line
    lines = [site.line for site in (report.graph_breaks if report else ()) if site.line]
    return min(lines) if lines else None


def error_headline(error: RunError, program: bool = False) -> Text:
    where = f" at line {error.line}" if error.line else ""
    text = Text(f"ERROR ({error.blamed(program)} error){where}: ", style=BAD)
    text.append(f"{error.type}: {error.message}".strip(": "))
    return text


def render_source(
    source: str,
    report: Report | None,
    error: RunError | None = None,
    *,
    stale: bool = False,
    theme: str = "ansi_dark",
    until: int | None = None,
    cursor: int | None = None,
    ask: str = "",
) -> RenderableType:
    """The snippet with gutter marks from `report` (breaks, recompiles, kernels) and `error`.

    `until` stops before that line, laid out as in the whole: its rendered height is the
    scroll offset that brings the line into view. `cursor` is the line cursor's line (None:
    no cursor), with that line's kernels below it; `ask` is how to ask the runs for the
    kernels profile, said there when the report has none ("" when they already ask).
    """
    marks = line_marks(report, error)
    lines = Syntax(source, "python", theme=theme).highlight(source).split("\n", allow_blank=True)
    if lines and not lines[-1].plain and source.endswith("\n"):
        lines = lines[:-1]
    grid = Table.grid(padding=(0, 1), expand=True)
    grid.add_column(justify="right", style=DIM, no_wrap=True, min_width=len(str(len(lines))))
    grid.add_column(width=1, no_wrap=True)
    grid.add_column(ratio=1, overflow="fold")
    for number, line in enumerate(lines, start=1):
        if until is not None and number >= until:
            break
        here = marks.get(number, [])
        letter = Text("".join(m.letter for m in here)[:1], style=here[0].style if here else "")
        grid.add_row(Text(str(number), style=CURSOR if number == cursor else ""), letter, line)
        for mark in here:
            if not (number == cursor and mark.letter == "K"):  # the cursor's rows say it in full
                grid.add_row("", "", Text(f"└─ {mark.label}", style=mark.style))
        if number == cursor:
            for row in _cursor_rows(report, number, line.plain, ask):
                grid.add_row("", "", row)
    parts: list[RenderableType] = []
    if _refused(report, error) is not None:
        parts.append(Text(refusal_words(report, width=FULL_WIDTH), style=BAD))
    elif error is not None:
        parts.append(error_headline(error, report is not None and report.kind == "program"))
    if stale and marks and report is not None:
        parts.append(Text("marks are from the previous result (STALE)", style=WARN))
    if not parts and report is not None:
        parts.append(_legend(report))
    parts.append(grid)
    return Group(*parts)


def _cursor_rows(report: Report | None, number: int, text: str, ask: str) -> list[Text]:
    """The cursor line's kernels, as rows under the line: `▶` before the first."""
    if report is None:
        return [Text(f"▶ line {number}: no result yet", style=DIM)]
    lines = compiled.line_kernel_lines(report, number, text, ask=ask)
    return [styled(line, indent="▶ " if i == 0 else "  ") for i, line in enumerate(lines)]


def _legend(report: Report) -> Text:
    sites = len(report.graph_breaks)
    if not sites:
        return Text("no graph breaks", style=DIM)
    lines = sorted({site.line for site in report.graph_breaks if site.line})
    where = f" (line {', '.join(map(str, lines))})" if lines else ""
    return Text(
        f"{plural(report.graph_break_count, 'graph break')} at {plural(sites, 'site')}{where}: "
        "B marks the line, the reason is below it",
        style=DIM,
    )
