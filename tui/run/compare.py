"""Before/after: what an edit or a settings change did, as words and a diff of the snippet.

Pure functions of two history entries, shared by the main screen (the newest run against the
previous run with the same settings) and the history screen (any two runs).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Group, RenderableType
from rich.text import Text

from playground.engine.history import Change, Entry, History, changes, describe, source_diff
from tui.panes.common import BAD, DIM, GOOD, HEADING, plural


@dataclass(frozen=True)
class BeforeAfter:
    """Two runs, oldest first; `changes` and `diff` are worked out once, here."""

    before: Entry
    after: Entry
    changes: tuple[Change, ...]
    diff: tuple[str, ...]

    @classmethod
    def of(cls, before: Entry, after: Entry) -> BeforeAfter:
        if before.number > after.number:
            before, after = after, before
        return cls(
            before,
            after,
            tuple(changes(before.report, after.report)),
            tuple(source_diff(before.source, after.source)),
        )

    @property
    def edited_lines(self) -> int:
        """Lines added or removed (a changed line counts twice, as diff tools count it)."""
        return sum(1 for line in self.diff if line[:1] in "+-")

    def headline(self) -> str:
        """ "since #3: breaks 1 -> 0, graphs 2 -> 1", or that nothing moved."""
        body = ", ".join(str(c) for c in self.changes) or "no change in the numbers"
        return f"since #{self.before.number}: {body}"


def since_previous(history: History, entry: Entry) -> BeforeAfter | None:
    """The entry against the newest earlier run with the same settings; None if it is the first."""
    before = history.previous_same_settings(entry)
    return BeforeAfter.of(before, entry) if before is not None else None


def changes_text(comparison: BeforeAfter) -> Text:
    """The one-line bar under the panes: the numbers that moved, and how much source did."""
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(f"#{comparison.after.number} ", style=HEADING)
    text.append(comparison.headline())
    edited = comparison.edited_lines
    # Short, so that at 80 columns the pointer to the diff survives the ellipsis.
    source = f"key 2: diff, {plural(edited, 'line')}" if edited else "source unchanged"
    text.append(f" | {source}", style=DIM)
    return text


def render_diff(lines: tuple[str, ...] | list[str]) -> Text:
    """A unified diff, highlighted; the +/- in front of each line carries the meaning without colour."""
    if not lines:
        return Text("source unchanged", style=DIM)
    text = Text()
    for line in lines:
        if line.startswith("@@"):
            style = DIM
        elif line.startswith("+"):
            style = GOOD
        elif line.startswith("-"):
            style = BAD
        else:
            style = ""
        text.append(line + "\n", style=style)
    text.rstrip()
    return text


def render_since(comparison: BeforeAfter) -> RenderableType:
    """The top of the Breaks pane after a rerun: what moved since the same settings last ran."""
    return Group(
        Text(f"run #{comparison.after.number} {comparison.headline()}", style=HEADING),
        render_diff(comparison.diff),
        Text("─" * 20, style=DIM),
    )


def render_comparison(comparison: BeforeAfter) -> RenderableType:
    """Any two runs, for the history screen: describe(), the settings if they differ, the diff."""
    parts: list[RenderableType] = [Text(describe(comparison.before, comparison.after), style=HEADING)]
    before, after = comparison.before.settings, comparison.after.settings
    if before != after:
        parts.append(Text(f"settings #{comparison.before.number}: {before.label()}", style=DIM))
        parts.append(Text(f"settings #{comparison.after.number}: {after.label()}", style=DIM))
    else:
        parts.append(Text(f"same settings: {after.label()}", style=DIM))
    parts.append(render_diff(comparison.diff))
    return Group(*parts)
