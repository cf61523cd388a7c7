"""The snippet file as the app shows it: its text, the hash of its bytes, and its SETTINGS."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playground.engine.report import Report
from playground.engine.settings import Settings
from playground.engine.snippet import read_regular_bytes
from playground.engine.snippet_settings import literal_settings, resolve_settings
from tui.intake import sha256, source_text


class ShownSnippet:
    """`text` is what the Source pane shows (control characters made visible), `sha` the hash
    of the bytes it came from ("" when unreadable)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.text = ""
        self.sha = ""
        self._file_settings = literal_settings(self.read_text() or "")

    def read_text(self) -> str | None:
        try:
            # utf-8-sig: a BOM would hide SETTINGS from the parser, as it would from compile().
            return read_regular_bytes(self.path).decode("utf-8-sig", errors="replace")
        except OSError:
            return None

    def refresh(self) -> bool:
        """Read the file as it is now; False only when it is missing. A directory, FIFO or
        unreadable file still goes to the engine, whose report names the problem."""
        try:
            data = read_regular_bytes(self.path)
        except FileNotFoundError:
            return False
        except OSError:
            self.text, self.sha = "", ""
            return True
        self.text, self.sha = source_text(data), sha256(data)
        return True

    def settings_after_edit(self, settings: Settings) -> Settings:
        """A SETTINGS edit in the file is deliberate: it overrides the keys it names."""
        found = literal_settings(self.text)
        if found == self._file_settings:
            return settings
        self._file_settings = found
        return resolve_settings(self.text, None, base=settings).settings

    def open(self, path: Path, settings: Settings, pinned: dict[str, Any]) -> Settings:
        """Switch to another file; its settings: its SETTINGS, then the command line's flags (as
        at start); the device and cold-start choice stay. The text is read by `refresh`."""
        self.path = path
        text = self.read_text() or ""
        self._file_settings = literal_settings(text)
        base = Settings(device=settings.device, cold=settings.cold)
        return resolve_settings(text, pinned, base=base).settings

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
