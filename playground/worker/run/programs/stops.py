"""How a program's run ends on our terms, and its own ways of ending kept as python keeps them:
our stop (`ProgramStopped`, raised only between calls of a compiled callable, and again at every
later call when the program swallows it), the alarm that fires only when no call comes at all,
`os._exit` turned into the program's end (`ProgramOsExit`), its `atexit` functions run when it
ends, and how long it may run. Worker-side; program_compiles.py and program.py use them.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import sys
import threading
import time
import types
from collections.abc import Callable
from typing import Any

import torch

_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep


class ProgramStopped(BaseException):
    """A bound ended the program (--max-calls, --max-seconds). A BaseException, so that the
    program's own `except Exception` cannot swallow it; a bare `except:` can, so the stop is
    also kept (CompiledCallables.stopped) and raised again at every later call."""

    def __init__(self, by: str, at: float) -> None:
        super().__init__(f"stopped by {by} at {at}")
        self.by = by
        self.at = at


class ProgramOsExit(BaseException):
    """The program called os._exit(code): in the run's process that would end the run before
    its report, so the call ends the program instead, like sys.exit (a process the program
    forked exits for real)."""

    def __init__(self, code: int) -> None:
        super().__init__(f"os._exit({code})")
        self.code = code


class Alarm:
    """--max-seconds for a program that stops calling its compiled callables (a long eager
    stretch). A bound lands between two calls of a compiled callable (CompiledCallables checks
    it before each call), never inside the program's own code; only a program that makes no
    call for a long while past its bound (`late_s`) is interrupted wherever it is, as a last
    resort before the run's timeout kills it with nothing kept."""

    def __init__(self, seconds: float | None, stopped: Callable[[ProgramStopped], None] | None = None) -> None:
        self.seconds = seconds
        self.started = time.monotonic()
        self.previous: Any = None
        self.stopped = stopped

    @staticmethod
    def late_s(seconds: float) -> float:
        """How long past the bound a program without calls runs on: half the bound, 2 s at least."""
        return max(2.0, seconds / 2)

    def __enter__(self) -> Alarm:
        if self.seconds:
            self.previous = signal.signal(signal.SIGALRM, self._expired)
            signal.setitimer(signal.ITIMER_REAL, self.seconds + self.late_s(self.seconds))
        return self

    def __exit__(self, *exc: object) -> None:
        self.cancel()

    def _expired(self, signum: int, frame: types.FrameType | None) -> None:
        stop = ProgramStopped("max_seconds", round(time.monotonic() - self.started, 3))
        if self.stopped is not None:
            self.stopped(stop)
        raise stop

    def cancel(self) -> None:
        if self.seconds and self.previous is not None:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)
            self.previous = None


class PythonsSigint:
    """SIGINT, for the length of the program, as `python` starts with it: Python's own handler,
    a KeyboardInterrupt the program may catch. A run's process has the kernel's default (so that
    a kill from the template ends it: procs.forked_from), under which a program that sends
    itself SIGINT, or whose `except KeyboardInterrupt` reads the handler, would be killed where
    under python it goes on. The worker runs in a session of its own: a Ctrl-C at the terminal
    never reaches it."""

    def __init__(self) -> None:
        self.previous: Any = None

    def install(self) -> None:
        if threading.current_thread() is threading.main_thread():
            self.previous = signal.signal(signal.SIGINT, signal.default_int_handler)

    def uninstall(self) -> None:
        if self.previous is not None:
            signal.signal(signal.SIGINT, self.previous)
            self.previous = None


class OsExitPatch:
    """os._exit, for the length of the program, raising ProgramOsExit in this process. Dynamo
    never traces the replacement (`Unseen`): inside a compiled function the call is a graph
    break at the program's line, as os._exit's own is, not a trace of our code."""

    def __init__(self) -> None:
        self.original: Callable[[int], Any] | None = None

    def install(self) -> None:
        self.original = original = os._exit
        pid = os.getpid()

        def _exit(code: int) -> Any:
            if os.getpid() == pid and threading.current_thread() is threading.main_thread():
                raise ProgramOsExit(code)
            return original(code)

        os._exit = _exit  # type: ignore[assignment]

    def uninstall(self) -> None:
        if self.original is not None:
            os._exit = self.original  # type: ignore[assignment]
            self.original = None


class AtExitPatch:
    """atexit.register, for the length of the program: the functions the program registers
    (not torch's own) are kept and run when it ends (`run`), last registered first, as Python
    runs them at exit; the run's process never reaches the interpreter's exit, so without this
    their output (a summary, a saved file) would never come."""

    def __init__(self) -> None:
        self.kept: list[tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]] = []
        self.original: tuple[Any, Any] | None = None

    def install(self) -> None:
        import atexit

        self.original = register, unregister = atexit.register, atexit.unregister
        kept = self.kept

        def register_(func: Callable[..., Any], *args: Any, **kwargs: Any) -> Callable[..., Any]:
            caller = os.path.abspath(sys._getframe(1).f_code.co_filename)
            if caller.startswith(_TORCH_DIR):
                return register(func, *args, **kwargs)
            kept.append((func, args, kwargs))
            return func

        def unregister_(func: Callable[..., Any]) -> None:
            kept[:] = [k for k in kept if k[0] != func]
            unregister(func)

        atexit.register, atexit.unregister = register_, unregister_  # type: ignore[assignment]

    def uninstall(self) -> None:
        import atexit

        if self.original is not None:
            atexit.register, atexit.unregister = self.original  # type: ignore[assignment]
            self.original = None

    def run(self) -> None:
        """The program's exit functions, as the interpreter runs them: an exception is printed
        and the next one runs."""
        import traceback

        while self.kept:
            func, args, kwargs = self.kept.pop()
            try:
                func(*args, **kwargs)
            except SystemExit:
                pass
            except BaseException:  # noqa: BLE001 - Python prints it and goes on
                print(f"Exception ignored in atexit callback {func!r}:", file=sys.stderr)
                traceback.print_exc()


def program_seconds(max_seconds: float | None, timeout_s: float | None) -> tuple[float | None, bool]:
    """How long the program may run: --max-seconds, else a third of the run's timeout (the
    eager reference runs it again afterwards, under the same bound, and a report of what ran
    beats a timeout that keeps nothing); and whether the timeout chose it."""
    if max_seconds:
        return max_seconds, False
    if timeout_s:
        return max(1.0, round(timeout_s / 3, 1)), True
    return None, False


#: The buffered files Python's teardown flushes (their concrete types: a scan by `type` is a
#: tenth of an isinstance scan over the ABC on a heap with torch imported).
_BUFFERED = (io.TextIOWrapper, io.BufferedWriter, io.BufferedRandom)


def flush_open_files() -> None:
    """Flush the program's files it left open, as the interpreter does at its exit (module
    teardown closes them): the run's process ends with os._exit, and a `log = open(...)` never
    closed would lose what it buffered. Not after the program's own os._exit, as in python."""
    import gc

    kinds = set(_BUFFERED)
    for obj in gc.get_objects():
        if type(obj) in kinds:
            with contextlib.suppress(Exception):  # detached, its descriptor closed: as python
                if not obj.closed:
                    obj.flush()
