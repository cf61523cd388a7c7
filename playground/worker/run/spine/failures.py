"""Who failed, and where: the errors that end a run early, and the blame of snippet against worker.

A run's error is data in its report (`RunError`): `failure()` turns an exception into one,
naming the snippet line it came from. Worker-side (the traceback's frames are the snippet's).
"""

from __future__ import annotations

import os
import traceback

from playground.engine.report import RunError
from playground.worker.capture.records import snippet_line_in_text


class Cancelled(Exception):
    """The client asked to cancel this run (a newer save made it stale)."""


class RunFailure(Exception):
    """Ends the run early with an error the report carries."""

    def __init__(self, kind: str, exc_type: str, message: str, line: int | None = None, detail: str = "") -> None:
        super().__init__(message)
        self.error = RunError(kind=kind, type=exc_type, message=message, line=line, detail=detail)

    @classmethod
    def of(cls, error: RunError) -> RunFailure:
        """The failure another process reported (the eager reference's), raised here."""
        return cls(error.kind, error.type, error.message, error.line, error.detail)


def first_line(text: str, limit: int = 300) -> str:
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()[:limit]
    return ""


def safe_str(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:  # noqa: BLE001 - the snippet's own exception class may raise in __str__
        return f"<{type(exc).__name__} whose str() raised>"


def _exception_line(exc: BaseException, path: str) -> int | None:
    """The innermost snippet line in the traceback, else one named in the message (Dynamo
    puts the user's frames into the text of Unsupported/UserError)."""
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if os.path.realpath(frame.filename) == os.path.realpath(path):
            line = frame.lineno
    text_line = snippet_line_in_text(safe_str(exc), path)
    return text_line or line


def raised_in_snippet(exc: BaseException, path: str) -> bool:
    """Whether the snippet's own code is on the exception's traceback."""
    target = os.path.realpath(path)
    return any(os.path.realpath(f.filename) == target for f in traceback.extract_tb(exc.__traceback__))


#: torch.distributed's words for `dist.get_rank()` or a collective without a process group.
_NO_GROUP = "Default process group has not been initialized"
_RANKS_HINT = (
    " (a one-process run has none: --ranks N, or n in the app, runs it on N processes joined by torch.distributed)"
)


#: Under torchrun (its WORLD_SIZE in the environment) the hint above would read as if the launch
#: had been ignored by mistake: it says what the playground does with it.
_LAUNCHER_HINT = (
    " (WORLD_SIZE={world} is set, as torchrun sets it, but the playground runs this file as one process"
    " of its own and joins no outside group: --ranks N, or n in the app, runs it on N processes here)"
)


_TWICE = "trying to initialize the default process group twice"
_TWICE_HINT = (
    " (across ranks the playground has joined a snippet's default group before the file loads:"
    " put init_process_group under `if not dist.is_initialized():`, which calls it under torchrun"
    " and not here)"
)


def failure(kind: str, exc: BaseException, path: str, context: str) -> RunFailure:
    """`exc` as the run's error of `kind`, its message prefixed with `context`."""
    message = first_line(safe_str(exc)) or type(exc).__name__
    if _NO_GROUP in message:
        world = os.environ.get("WORLD_SIZE", "")
        launched = world.isdigit() and int(world) > 1
        message = message.rstrip(".") + (_LAUNCHER_HINT.format(world=world) if launched else _RANKS_HINT)
    elif _TWICE in message:
        message = message.rstrip("!") + _TWICE_HINT
    try:
        detail = "".join(traceback.format_exception(exc))[-6000:]
    except Exception:  # noqa: BLE001 - format_exception calls the raising __str__ too
        detail = "".join(traceback.format_tb(exc.__traceback__))[-6000:]
    if isinstance(exc, SystemExit):
        message = f"sys.exit({exc.code!r}) called"
    return RunFailure(kind, type(exc).__name__, f"{context}: {message}", _exception_line(exc, path), detail)


def unexpected(exc: Exception, path: str, doing: str) -> RunError:
    """An exception that no phase turned into a RunFailure: the snippet's when its code is on
    the traceback (a model that raises on its fifth call, during timing), else ours."""
    if raised_in_snippet(exc, path):
        return failure("snippet", exc, path, f"raised while {doing}").error
    return failure("worker", exc, path, f"internal error in compile-playground's worker while {doing}").error
