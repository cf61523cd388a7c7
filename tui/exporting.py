"""Writing exports from the app: torch's structured trace (for tlparse) and a Markdown report.

Blocking file work only; the app calls these through `asyncio.to_thread` so a large trace
never stalls the UI. Nothing here overwrites a file the user already has.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from playground.engine.exports import markdown_report, marked, unique_path, write_trace

#: Where `t` writes traces, under the current folder (one file per trace, never replaced).
TRACE_DIR = "compile-playground-trace"
#: The report keys that carry the trace; kept out of the history (they can be megabytes).
TRACE_KEYS = ("trace_lines", "trace_strings")


def shown(path: Path) -> str:
    """A path as short as the user can paste it: relative to the current folder when inside it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def write_markdown(report: dict[str, Any], folder: Path, snippet_stem: str) -> Path:
    """`<snippet-stem>-report.md` in `folder` (suffixed when taken); returns its path."""
    text = marked(markdown_report(report))
    path = unique_path(folder, f"{snippet_stem}-report", ".md")
    path.write_text(text, encoding="utf-8")
    return path


def save_trace(report: dict[str, Any], folder: Path) -> tuple[Path, str]:
    """The trace as a TORCH_TRACE log in `folder`, and the tlparse command that renders it."""
    log = write_trace(report, folder)
    out = log.with_suffix("")  # tlparse refuses an existing output folder: one per log
    return log, f"tlparse {shlex.quote(shown(log))} -o {shlex.quote(shown(out))}"


def has_trace(report: dict[str, Any]) -> bool:
    return bool(report.get("trace_lines"))


def without_trace(report: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in report.items() if key not in TRACE_KEYS}


__all__ = ["TRACE_DIR", "has_trace", "save_trace", "shown", "unique_path", "without_trace", "write_markdown"]
