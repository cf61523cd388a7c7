"""The snippet file as the app shows it: its text, the hash of its bytes, and its SETTINGS.

Each run reads the file once, here: the Source pane's text and the run the engine is sent
(`prepared`) come from the same bytes, and its SETTINGS is parsed once.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playground.engine.report import Report
from playground.engine.settings import ResolvedSettings, Settings, SettingsProblem
from playground.engine.snippet import (
    PreparedRun,
    SnippetError,
    SnippetSource,
    prepared_from,
    read_regular_bytes,
    read_snippet,
    snippet_from_bytes,
    unreadable_run,
)
from playground.engine.snippet_settings import SnippetSettings, layered_settings, read_snippet_settings
from tui.engine.intake import sha256, shown_text, source_text


class ShownSnippet:
    """`text` is what the Source pane shows (control characters made visible), `sha` the hash
    of the bytes it came from ("" when unreadable)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.text = ""
        self.sha = ""
        #: The snippet as the last read found it: what runs (None when it cannot), why not, and
        #: its SETTINGS with their problems.
        self._source: SnippetSource | None = None
        self._unreadable: SnippetError | None = None
        self._found = SnippetSettings({}, {})
        self._problems: tuple[SettingsProblem, ...] = ()
        self._file_settings = read_snippet_settings(self.read_text() or "").valid_keys()

    def read_text(self) -> str | None:
        try:
            # utf-8-sig: a BOM would hide SETTINGS from the parser, as it would from compile().
            return read_regular_bytes(self.path).decode("utf-8-sig", errors="replace")
        except OSError:
            return None

    def refresh(self) -> bool:
        """Read the file as it is now; False only when it is missing. A directory, FIFO or
        unreadable file still goes to the engine, whose report names the problem."""
        self._source, self._unreadable = None, None
        try:
            data = read_regular_bytes(self.path)
        except FileNotFoundError:
            return False
        except OSError:
            self.text, self.sha = "", ""
            self._read_settings("")
            return True
        # The save's bytes are decoded and hashed once, by the engine's reader; only bytes it
        # cannot run (not UTF-8) are decoded again here, with replacements, to be shown.
        try:
            self._source = snippet_from_bytes(self.path, data)
        except SnippetError as exc:
            self._unreadable = exc
            self.text, self.sha = source_text(data), exc.sha256 or sha256(data)
        else:
            self.text, self.sha = shown_text(self._source.text), self._source.sha256
        self._read_settings(self._source.text if self._source is not None else self.text)
        return True

    def _read_settings(self, text: str) -> None:
        self._found = read_snippet_settings(text)
        self._problems = layered_settings(self._found).problems

    def prepared(self, settings: Settings) -> PreparedRun:
        """The run of what the last `refresh` read, under `settings`: refused when its SETTINGS
        has a problem, or when it cannot run at all."""
        if self._source is not None:
            return prepared_from(self._source, ResolvedSettings(settings, self._problems))
        if self._unreadable is not None:
            return unreadable_run(self.path, settings, self._unreadable)
        try:
            # Unreadable at the last read (a directory, a FIFO): the engine's reader words why.
            source = read_snippet(self.path)
        except SnippetError as exc:
            return unreadable_run(self.path, settings, exc)
        return prepared_from(source, ResolvedSettings(settings, self._problems))

    def settings_after_edit(self, settings: Settings) -> Settings:
        """A SETTINGS edit in the file is deliberate: it overrides the keys it names. A save
        that does not parse edits nothing: the keys toggled since stay through it and the fix."""
        found = self._found.valid_keys()
        if not self._found.parsed or found == self._file_settings:
            return settings
        self._file_settings = found
        return layered_settings(self._found, None, base=settings).settings

    def open(self, path: Path, settings: Settings, pinned: dict[str, Any]) -> Settings:
        """Switch to another file; its settings: its SETTINGS, then the command line's flags (as
        at start); the device and cold-start choice stay. The text is read by `refresh`."""
        self.path = path
        found = read_snippet_settings(self.read_text() or "")
        self._file_settings = found.valid_keys()
        base = Settings(device=settings.device, cold=settings.cold)
        return layered_settings(found, pinned, base=base).settings

    def sync(self, report: Report) -> None:
        """Show the text that actually ran, if the file changed between our read and the run's."""
        if not report.content_sha256 or report.content_sha256 == self.sha:
            return
        try:
            data = read_regular_bytes(self.path)
        except OSError:
            return
        if sha256(data) == report.content_sha256:
            self.text, self.sha = source_text(data), report.content_sha256
