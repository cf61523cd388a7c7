"""The terminal the app draws on, and what happens when it goes away.

A terminal can vanish under a running app: an SSH connection drops, a window is closed, tmux's
server is killed. Textual's own driver then blocks for ever: its writer thread dies on the
first EIO, its queue of writes fills, and the main thread waits in `Queue.put` while shutting
down (and the loop that would run a SIGTERM handler is that main thread). Here a vanished
terminal is a quit: writes to it are dropped instead of failing, the hang-up is noticed
whether it shows as EIO, as POLLHUP or as end of input, and the app is told once.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import termios
import threading
from collections.abc import Callable
from typing import IO, Any

from textual.drivers.linux_driver import LinuxDriver

#: How often the watch thread asks the kernel whether the terminal is still there.
POLL_S = 0.2

_GONE = select.POLLHUP | select.POLLERR | select.POLLNVAL

#: What Textual writes on its way out, all at once: the Kitty keyboard protocol, mouse
#: reporting, bracketed paste and focus events off, the alternate screen left, the cursor shown.
_GIVE_BACK = "\x1b[<u\x1b[?1000l\x1b[?1003l\x1b[?1015l\x1b[?1006l\x1b[?2004l\x1b[?1004l\x1b[?7h\x1b[?1049l\x1b[?25h"


class _Output:
    """The driver's output file, made safe to write to after the terminal has gone: the first
    error (EIO on a hung-up terminal, EPIPE, a closed file) reports the loss and every later
    write is dropped, so the writer thread never dies and the queue before it never fills."""

    def __init__(self, file: IO[str], on_gone: Callable[[], None]) -> None:
        self._file = file
        self._on_gone = on_gone
        self.gone = False

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                return self._file.write(text)
            except (OSError, ValueError):
                self.lost()
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self._file.flush()
            except (OSError, ValueError):
                self.lost()

    def lost(self) -> None:
        self.gone = True
        self._on_gone()

    def fileno(self) -> int:
        return self._file.fileno()

    def isatty(self) -> bool:
        return True

    def __getattr__(self, name: str) -> Any:
        return getattr(self._file, name)


class TerminalDriver(LinuxDriver):
    """Textual's Linux driver, for which a terminal that goes away is a quit: the app's
    `terminal_gone()` is called once, on its loop, and nothing the app writes afterwards
    can block or raise."""

    def __init__(self, app: Any, **kwargs: Any) -> None:
        super().__init__(app, **kwargs)
        self._output = _Output(self._file, self._gone)  # type: ignore[arg-type]
        self._file = self._output  # type: ignore[assignment]
        self._loop: asyncio.AbstractEventLoop | None = None
        self._lost = threading.Event()
        self._stopped = threading.Event()
        self._watcher: threading.Thread | None = None
        # The standard descriptors that are this terminal: pointed at /dev/null once it has
        # gone, so nothing written on the way out (Python's own flush at exit included)
        # fails or waits on it.
        self._ttys = [fd for fd in (1, 2) if _isatty(fd)]

    def start_application_mode(self) -> None:
        self._loop = asyncio.get_running_loop()
        super().start_application_mode()
        # Once: a resume after `App.suspend()` (the editor) starts application mode again.
        if self._watcher is None:
            self._watcher = threading.Thread(target=self._watch, name="terminal-watch", daemon=True)
            self._watcher.start()

    def run_input_thread(self) -> None:
        try:
            super().run_input_thread()
        except OSError:
            # EIO: the terminal hung up. (Textual would report it as a crash, drawn on the
            # terminal that is no longer there.)
            self._gone()

    def close(self) -> None:
        self._stopped.set()
        super().close()

    def give_back_now(self) -> None:
        """The terminal as it was before the app, in one write that cannot block (the last
        act of a process whose close is stuck: no thread is left to wait on)."""
        if self._lost.is_set():
            return
        with contextlib.suppress(OSError, ValueError):
            fd = self._output.fileno()
            os.set_blocking(fd, False)
            os.write(fd, _GIVE_BACK.encode())
        if self.attrs_before is not None:
            with contextlib.suppress(termios.error, OSError):
                termios.tcsetattr(self.fileno, termios.TCSANOW, self.attrs_before)

    def _watch(self) -> None:
        """Ask the kernel, a few times a second, whether the terminal is still there. A
        hung-up pseudo-terminal reads as end of input, not as an error, so the input thread
        alone would never say so (it spins on the empty reads)."""
        poll = select.poll()
        for fd in {self.fileno, self._output.fileno()}:
            poll.register(fd, 0)  # POLLHUP, POLLERR and POLLNVAL are reported unasked
        while not self._stopped.is_set() and not self._lost.is_set():
            try:
                events = poll.poll(POLL_S * 1000)
            except OSError:
                events = [(-1, select.POLLERR)]
            if any(mask & _GONE for _, mask in events):
                self._gone()
                return
            if events:  # an event we did not ask for: do not spin on it
                self._stopped.wait(POLL_S)

    def _gone(self) -> None:
        """The terminal has gone (any thread): drop what is still written to it and tell the
        app, once."""
        if self._lost.is_set():
            return
        self._lost.set()
        self._output.gone = True
        with contextlib.suppress(OSError):
            null = os.open(os.devnull, os.O_WRONLY)
            for fd in self._ttys:
                os.dup2(null, fd)
            os.close(null)
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop has already closed
                loop.call_soon_threadsafe(self._tell_app)

    def _tell_app(self) -> None:
        handler = getattr(self._app, "terminal_gone", None)
        if handler is not None:
            handler()
        else:
            self._app.exit(return_code=1)


def _isatty(fd: int) -> bool:
    try:
        return os.isatty(fd)
    except OSError:
        return False
