"""How a program's run ended, as `python FILE` would have ended it: its exit status, the
exception it raised (the program's, a snippet error, or torch.compile's when it came out of a
compiled callable from torch's compiler), os._exit, or the playground's stop (a bound, never an
error). Worker-side.
"""

from __future__ import annotations

import os
import traceback
from dataclasses import dataclass
from typing import Any

from playground.engine.report import ProgramException, ProgramExit, RunError, Stopped
from playground.worker.capture import own_frames
from playground.worker.run.programs.program_compiles import CompiledCallables
from playground.worker.run.programs.stops import ProgramOsExit, ProgramStopped
from playground.worker.run.spine.failures import first_line, safe_str


@dataclass
class Ended:
    """The program's end: its exit, the bound that stopped it, the error it is reported with."""

    exit: ProgramExit
    stopped: Stopped | None = None
    error: RunError | None = None
    #: os._exit ended it: its exit functions are skipped, as python skips them.
    os_exited: bool = False


def ended(exc: BaseException | None, path: str, made: CompiledCallables) -> Ended:
    """The end of a program that raised `exc` (None: it ran to its last line)."""
    if exc is None:
        return Ended(ProgramExit(code=0))
    if isinstance(exc, ProgramStopped):
        return Ended(ProgramExit(code=None), stopped=Stopped(by=exc.by, at=exc.at))
    if isinstance(exc, ProgramOsExit):
        code = exit_code(exc.code)
        error = None
        if code:
            error = RunError(
                kind="snippet",
                type="SystemExit",
                message=f"the program called os._exit({exc.code})",
                line=program_line(exc, path),
            )
        return Ended(ProgramExit(code=code), error=error, os_exited=True)
    if isinstance(exc, SystemExit):
        code = exit_code(exc.code)
        error = None
        if code:
            # `python FILE` would have failed (argparse's usage error exits 2): said, with the
            # program's line, never a quiet exit status in the JSON alone.
            shown = f": {exc.code}" if isinstance(exc.code, str) else ""
            error = RunError(
                kind="snippet",
                type="SystemExit",
                message=f"the program exited with status {code}{shown}",
                line=program_line(exc, path),
            )
        return Ended(ProgramExit(code=code), error=error)
    exit_, error = raised(exc, path, made)
    return Ended(exit_, error=error)


def exit_code(code: Any) -> int:
    """sys.exit's argument as the process's exit status, as Python gives it."""
    if code is None:
        return 0
    if isinstance(code, bool):
        return int(code)
    if isinstance(code, int):
        return code & 0xFF if code >= 0 else code % 256
    return 1  # sys.exit("message") prints it and exits 1


def raised(exc: BaseException, path: str, made: CompiledCallables) -> tuple[ProgramExit, RunError]:
    line = program_line(exc, path)
    message = first_line(safe_str(exc)) or type(exc).__name__
    try:
        # As python prints it: the program's frames, none of ours (the run, our patch's call).
        detail = own_frames.strip("".join(traceback.format_exception(exc)))[-6000:]
    except Exception:  # noqa: BLE001
        detail = ""
    inside = made.raised_in.get(id(exc))
    kind = "compile" if inside is not None and from_torch_compiler(exc) else "snippet"
    where = f" in {inside.name} (compiled at line {inside.line})" if inside is not None else ""
    said = message
    if isinstance(exc, EOFError):
        # input() or a read of sys.stdin: the run has no terminal to read from.
        said += " (a program's stdin is empty in the playground: it runs without a terminal)"
    error = RunError(
        kind=kind,
        type=type(exc).__name__,
        message=f"the program raised{where}: {said}",
        line=line,
        detail=detail,
    )
    return ProgramExit(code=1, exception=ProgramException(type(exc).__name__, message, line)), error


def from_torch_compiler(exc: BaseException) -> bool:
    """Whether torch's compiler raised it (a fullgraph refusal, a backend failure)."""
    try:
        from torch._dynamo.exc import TorchDynamoException

        if isinstance(exc, TorchDynamoException):
            return True
    except ImportError:  # pragma: no cover
        pass
    return type(exc).__module__.startswith(("torch._dynamo", "torch._inductor"))


def program_line(exc: BaseException, path: str) -> int | None:
    """The innermost line of the program file on the exception's traceback."""
    real = os.path.realpath(path)
    line = None
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        if os.path.realpath(frame.f_code.co_filename) == real:
            line = lineno
    return line
