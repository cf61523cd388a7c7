"""The app's `w` and `t` exports: the Markdown report and torch's structured trace, written to files.

The formats are the engine's (`playground.engine.exports`); this holds what the app adds: the
file names, the paths as the user can paste them, the tlparse command. Blocking file work only;
the app calls these through `asyncio.to_thread` so a large trace never stalls the UI. Nothing
here overwrites a file the user already has.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from playground.engine.events import Trace
from playground.engine.exports import markdown_report, marked, unique_path, write_trace
from playground.engine.report import Report

#: Where `t` writes traces, under the current folder (one file per trace, never replaced).
TRACE_DIR = "compile-playground-trace"


def shown(path: Path) -> str:
    """A path as short as the user can paste it: relative to the current folder when inside it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def write_markdown(report: Report, folder: Path, snippet_stem: str) -> Path:
    """`<snippet-stem>-report.md` in `folder` (suffixed when taken); returns its path."""
    text = marked(markdown_report(report))
    path = unique_path(folder, f"{snippet_stem}-report", ".md")
    path.write_text(text, encoding="utf-8")
    return path


def save_trace(trace: Trace, folder: Path) -> tuple[Path, str]:
    """The trace as a TORCH_TRACE log in `folder`, and the tlparse command that renders it."""
    log = write_trace(trace, folder)
    out = log.with_suffix("")  # tlparse refuses an existing output folder: one per log
    return log, f"tlparse {shlex.quote(shown(log))} -o {shlex.quote(shown(out))}"


__all__ = ["TRACE_DIR", "save_trace", "shown", "unique_path", "write_markdown"]
