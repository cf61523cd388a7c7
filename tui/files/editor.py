"""Key e: the user's $VISUAL or $EDITOR on the snippet, checked before the terminal is handed over
and run while the app is suspended."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path


def editor_command(name: str, editor: str, snippet: Path) -> tuple[list[str], str]:
    """The command line that edits `snippet` with `editor` (the value of $`name`), or the
    reason it cannot run, found before the terminal is handed over."""
    try:
        words = shlex.split(editor)
    except ValueError as exc:
        return [], f"${name} cannot be read as a command ({exc}): {editor!r}"
    if not words:
        return [], f"${name} holds no command: {editor!r}"
    program = words[0]
    if shutil.which(program) is None:
        why = "is a folder" if os.path.isdir(program) else "was not found or is not executable"
        return [], f"${name}: {program!r} {why}"
    return [*words, str(snippet)], ""


def run_editor(argv: list[str]) -> str:
    """Run the editor in the terminal (the app suspended); what went wrong, or "".

    Returns rather than raises: `App.suspend()` gives the terminal back only when its block
    ends normally, so an exception here would leave the screen blank and keys echoing."""
    try:
        status = subprocess.run(argv, check=False).returncode
    except Exception as exc:  # OSError mostly; ValueError for a NUL in the command line
        return f"could not start {argv[0]!r}: {exc}"
    except KeyboardInterrupt:
        return f"{argv[0]!r} was interrupted"
    if status < 0:
        return f"{argv[0]!r} was killed by signal {-status}"
    if status:
        return f"{argv[0]!r} exited with status {status}: not rerun (saving still reruns)"
    return ""
