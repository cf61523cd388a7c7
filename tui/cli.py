"""`compile-playground [SNIPPET]`: the entry the project's CLI calls to open the app."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Any

from playground import snippets_dir
from playground.engine.passes import NO_PASSES, Passes
from playground.engine.program import ProgramOptions
from playground.engine.run_request import DEFAULT_MIN_RUN_TIME_S, RunFlags
from playground.engine.session import SessionWriter
from tui.factory import initial_settings, make_app
from tui.files.gallery import copy_without_overwrite

#: Where the no-argument start puts its editable copy of the default snippet.
DEFAULT_COPY = "snippet.py"


def default_snippet(directory: Path) -> tuple[Path, str]:
    """An editable copy of the bundled default snippet in `directory`, and what to tell the user.

    An existing file is opened untouched: it may be the user's work from last time.
    """
    dest = directory / DEFAULT_COPY
    source = snippets_dir() / "default.py"
    if dest.exists():
        return dest, f"opened your existing {DEFAULT_COPY} (not overwritten)"
    if not source.exists():
        raise FileNotFoundError(f"the bundled default snippet is missing: {source}")
    if copy_without_overwrite(source, dest):
        return dest, f"created {DEFAULT_COPY} from the default snippet: edit and save it"
    return dest, f"opened your existing {DEFAULT_COPY} (not overwritten)"


def main(
    path: str | None,
    settings_overrides: dict[str, Any] | None = None,
    *,
    timeout_s: float | None = None,
    present: str | None = None,
    passes: Passes = NO_PASSES,
    timing: bool = True,
    min_run_time: float | None = None,
    program: ProgramOptions | None = None,
) -> int:
    """Open the app on `path` (or on ./snippet.py, made from the default); the exit status.

    `settings_overrides` are the CLI's setting flags, only those given and already typed
    (`playground.cli.flags.overrides_of`; {"dynamic": None} is --dynamic auto); they win over
    the snippet's SETTINGS. `timeout_s` is the worker's run timeout (the client's default when None).
    `present` is a session folder every complete run is published to, for followers.
    `passes` (--kernels, --code, --guard-what-if) are asked of every run from the first one.
    `timing` False (--no-timing) and `min_run_time` (--min-run-time) hold for every run.
    `program` (-- ARGS, --max-calls, --max-seconds, --program, --callable) holds for every run
    of a file that runs as a program (playground/engine/program.py).
    """
    from tui.engine.protocol import real_engine

    try:
        if path is None:
            snippet, notice = default_snippet(Path.cwd())
        else:
            snippet, notice = Path(path), ""
            if snippet.is_dir():
                raise IsADirectoryError(f"{path} is a directory, not a snippet file")
            if snippet.exists() and not snippet.is_file():
                raise OSError(f"{path} is not a regular file")
            if not snippet.is_file():
                raise FileNotFoundError(f"no such snippet file: {path}")
    except OSError as exc:
        # Before the app owns the terminal, stderr is the place to say it.
        print(f"compile-playground: {exc}", file=sys.stderr)
        return 2
    writer = None
    if present is not None:
        try:
            writer = SessionWriter(present, snippet_name=snippet.name)
        except OSError as exc:
            print(f"compile-playground: --present: {exc}", file=sys.stderr)
            return 2
    settings = initial_settings(snippet, settings_overrides)
    # The app shows Dynamo's findings while a slow backend compiles (playground/engine/findings.py).
    flags = RunFlags(
        timing=timing,
        min_run_time=DEFAULT_MIN_RUN_TIME_S if min_run_time is None else min_run_time,
        early_findings=True,
    )
    engine = real_engine(timeout_s=timeout_s)
    app = make_app(
        snippet,
        engine=engine,
        settings=settings,
        notice=notice,
        pinned=settings_overrides,
        present=writer,
        passes=passes,
        run_flags=flags,
        program=program,
    )
    try:
        app.run()
    finally:
        if writer is not None:
            with contextlib.suppress(OSError):
                writer.close()  # also when the app failed: followers must not wait on a dead session
    return app.return_code or 0
