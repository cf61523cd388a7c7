"""A follower's fork of a run: the flags that give its settings, its file name, a file that never
overwrites."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from playground.engine.session.folder_files import _UNSAFE_NAME, _new_temp
from playground.engine.settings import Settings, dynamic_name

try:  # POSIX; elsewhere a second presenter is not refused (the folder's owner check still is)
    import fcntl
except ImportError:  # pragma: no cover
    fcntl = None  # type: ignore[assignment]


def setting_flags(settings: Settings) -> list[str]:
    """The command line's setting flags that give exactly `settings` whatever the snippet's
    SETTINGS say: how a fork opens the attendee's playground with the presenter's settings.
    Each value is glued to its flag (`--backend=VALUE`): a value comes from the session folder,
    and one that reads like an option (`--present=DIR`) must stay that flag's value."""
    flags = ["--fullgraph" if settings.fullgraph else "--no-fullgraph"]
    flags += [f"--dynamic={dynamic_name(settings.dynamic)}", f"--backend={settings.backend}"]
    flags += [f"--mode={settings.mode or 'default'}", f"--device={settings.device}"]
    if settings.cold:
        flags.append("--cold")
    for key, value in settings.config:
        flags.append(f"--config={key}={json.dumps(_plain(value))}")
    flags.append(f"--stance={settings.stance}")
    if settings.error_on_graph_break:
        flags.append("--error-on-graph-break")
    return flags


def _plain(value: Any) -> Any:
    return [_plain(v) for v in value] if isinstance(value, tuple) else value


def fork_path(directory: Path, snippet_name: str, number: int) -> Path:
    """Where a fork of run `number` of `snippet_name` goes first: `<stem>-run<number>.py`. The
    name is the presenter's: letters, digits, `_`, `.` and `-` are kept (no leading `-` or `.`,
    so never an option or a hidden file), anything else becomes `_`."""
    stem = _UNSAFE_NAME.sub("_", Path(snippet_name.replace("\\", "/")).stem).lstrip("-.")[:80] or "snippet"
    return directory / f"{stem}-run{number}.py"


def write_new_file(dest: Path, data: bytes) -> Path:
    """Write `data` to `dest`, or to `dest` with -2, -3… added when that exists: never over an
    existing file, never a torn one (a temp file, then a hard link, which fails if the name
    was taken in between). The file's mode is the umask's, as any new file of the user's. The
    path written."""
    stem, suffix = dest.stem, dest.suffix
    fd, tmp = _new_temp(dest.parent, dest.name, 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        for attempt in range(1, 1000):
            candidate = dest if attempt == 1 else dest.with_name(f"{stem}-{attempt}{suffix}")
            try:
                os.link(tmp, candidate)
            except FileExistsError:
                continue
            return candidate
        raise FileExistsError(f"no free name beside {dest}")
    finally:
        tmp.unlink(missing_ok=True)
