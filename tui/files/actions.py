"""The app's keys that reach files: the Markdown export (`w`), the gallery's copy (`g`'s
choice) and $EDITOR (`e`). Mixed into the app before `App`: they need its `pipeline`, `snippet`, `notify`,
`push_screen` and `suspend`."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from textual import work
from textual.app import SuspendNotSupported

from playground.engine.report import Report
from tui.files.editor import editor_command, run_editor
from tui.files.exports import shown, write_markdown
from tui.files.gallery import GalleryEntry, open_copy


class FileActions:
    """`w`, `g` and `e`: each writes, copies or edits a file, then hands the run to the pipeline."""

    def action_export_markdown(self: Any) -> None:
        report = self.pipeline.shown_report()
        if report is None:
            self.notify("no result to write yet", severity="warning")
            return
        self.write_markdown_report(report)

    @work(group="export", exit_on_error=False)
    async def write_markdown_report(self: Any, report: Report) -> None:
        """Off the UI thread: the report reads the snippet for its source lines."""
        path = await asyncio.to_thread(write_markdown, report, Path.cwd(), self.snippet.stem)
        self.notify(f"Markdown report written: {shown(path)}", title="report", timeout=10)

    def open_entry(self: Any, entry: GalleryEntry | None) -> None:
        """The gallery screen's choice: an editable copy here, never over an existing file."""
        if entry is None:
            return
        try:
            path, created = open_copy(entry.path, Path.cwd())
        except OSError as exc:
            self.notify(f"could not copy {entry.name}: {exc}", severity="error")
            return
        if created:
            self.notify(f"opened a copy: {path}")
        else:
            self.notify(f"{path.name} already exists here: opened it as it is", severity="warning")
        self.pipeline.open_snippet(path)

    def action_edit(self: Any) -> None:
        """Open the snippet in $VISUAL or $EDITOR; saving reruns (and the watcher sees it too).

        Whatever the editor does, the app comes back: nothing may raise inside `suspend()`,
        which only restores the terminal when its block ends normally."""
        name = "VISUAL" if os.environ.get("VISUAL") else "EDITOR"
        editor = os.environ.get(name, "")
        if not editor.strip():
            self.notify("set $EDITOR (or $VISUAL) to edit from here", severity="warning")
            return
        argv, problem = editor_command(name, editor, self.snippet)
        if problem:
            self.notify(problem, title="edit", severity="error", timeout=10)
            return
        try:
            with self.suspend():
                problem = run_editor(argv)
        except SuspendNotSupported:
            self.notify(
                "this display cannot suspend (a browser?): edit the file elsewhere; saving reruns",
                severity="warning",
            )
            return
        if problem:
            self.notify(problem, title="edit", severity="error", timeout=10)
            return
        self.pipeline.run("edited")
