"""The presenter's side of a workshop session: each complete run, the pane on screen and the
worker's handshake go to a session folder (`playground.engine.session`) that followers read.

A failed write never stops the presenter's own work: it is said once, and publishing stops.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from playground.engine.hello import WorkerHello
from playground.engine.report import Report
from playground.engine.session import SessionWriter, source_that_ran


class Presenting:
    """Publishes through `writer` (None: not presenting, every call a no-op); `warn` shows a
    failure to the presenter."""

    def __init__(self, writer: SessionWriter | None, warn: Callable[[str], None]) -> None:
        self.writer = writer
        self._warn = warn

    @property
    def active(self) -> bool:
        return self.writer is not None

    def _do(self, what: str, action: Callable[[SessionWriter], Any]) -> None:
        writer = self.writer
        if writer is None:
            return
        try:
            action(writer)
        except (OSError, ValueError) as exc:
            self.writer = None
            self._warn(f"stopped presenting: could not {what} in {writer.folder}: {exc}")

    def run_finished(self, report: Report, path: Path, shown: str) -> None:
        """A complete run of the file at `path`: followers see it next, with the file's own
        text (a fork must get the bytes that ran, not the screen's escaped copy of them) when
        the file still holds what ran, else `shown`, the text on the presenter's screen."""
        if report.stage != "complete" or self.writer is None:
            return
        source = source_that_ran(path, report.content_sha256, shown)
        self._do("publish the run", lambda w: w.publish(report, source, report.settings, path.name))

    def pane(self, pane: str) -> None:
        self._do("say which pane is shown", lambda w: w.update(pane=pane))

    def hello(self, hello: WorkerHello | None) -> None:
        if hello is not None:
            self._do("publish the worker's handshake", lambda w: w.update(hello=hello))

    def close(self) -> None:
        self._do("say the session ended", lambda w: w.close())
