"""The bundled snippets, the gallery list, and making editable copies of them.

A copy is written next to the user, never over anything: the installed package stays pristine
and a user's edits are never lost to a second `compile-playground` or gallery pick.
"""

from __future__ import annotations

import ast
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from playground.engine.textsafe import visible


def copy_without_overwrite(source: Path, dest: Path) -> bool:
    """Copy `source` to `dest` atomically unless `dest` exists; True when a copy was made.

    Written to a temp file in the destination folder and fsynced first, so a crash never leaves
    a half-written snippet. The final step is a hard link, which fails if `dest` appeared in the
    meantime; where links are unsupported it falls back to `os.replace` after a fresh check.
    """
    if dest.exists():
        return False
    data = source.read_bytes()
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".tmp", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        try:
            os.link(tmp, dest)
        except FileExistsError:
            return False
        except OSError:
            if dest.exists():
                return False
            os.replace(tmp, dest)
        return True
    finally:
        tmp.unlink(missing_ok=True)


@dataclass(frozen=True)
class GalleryEntry:
    """One bundled snippet: its file and the first line of its header comment."""

    name: str
    path: Path
    title: str


def header_title(text: str) -> str:
    """The first line of a snippet's header comment (or of its docstring), without the `#`."""
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#!") or (line.startswith("#") and "coding" in line):
            continue
        if line.startswith("#"):
            title = line.lstrip("#").strip()
            if title:
                return title
            continue
        break
    try:
        docstring = ast.get_docstring(ast.parse(text))
    except (SyntaxError, ValueError):
        docstring = None
    return docstring.strip().splitlines()[0] if docstring and docstring.strip() else ""


def list_gallery(directory: Path) -> list[GalleryEntry]:
    """The snippets in `directory`, by name, then each section's (a package folder such as
    `models/`, its entries named `models/gpt2`); private files and folders (`_*`) left out."""
    if not directory.is_dir():
        return []
    entries = _entries(directory, "")
    for section in sorted(directory.iterdir()):
        if section.is_dir() and not section.name.startswith(("_", ".")) and (section / "__init__.py").is_file():
            entries.extend(_entries(section, f"{section.name}/"))
    return entries


def _entries(directory: Path, prefix: str) -> list[GalleryEntry]:
    entries = []
    for path in sorted(directory.glob("*.py")):
        if path.name.startswith("_"):
            continue
        try:
            # utf-8-sig: a BOM before the header comment would hide its `#`. The title is
            # drawn on screen, so its control characters are made visible.
            title = visible(header_title(path.read_text(encoding="utf-8-sig")))
        except (OSError, UnicodeDecodeError):
            title = "(unreadable)"
        entries.append(GalleryEntry(name=prefix + path.stem, path=path, title=title))
    return entries


def open_copy(source: Path, directory: Path) -> tuple[Path, bool]:
    """An editable copy of `source` in `directory`: (its path, whether it was newly made).

    An existing file of that name is opened as it is, since it may hold the user's edits.
    """
    dest = directory / source.name
    return dest, copy_without_overwrite(source, dest)
