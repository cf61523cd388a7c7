"""How the playground app ends on a stop signal or a lost terminal: as `q` does, with the
exit status 128 + the signal, and a deadline that ends the process regardless should that
close stall (a worker that will not die, a write that never returns)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import threading
from typing import Any

from textual.driver import Driver

#: After a stop signal, or the terminal going away, the app closes as `q` does; should that
#: close stall, the process ends here regardless. Longer than a normal close takes,
#: mid-compile included (about 1 s).
STOP_DEADLINE_S = 4.0


class StopsOnSignals:
    """Mixed into the app before `App`: it needs the app's `engine`, `_quit(code)`, `run_worker`,
    `is_headless` and `_driver`."""

    _loop: asyncio.AbstractEventLoop | None = None
    _deadline: threading.Timer | None = None
    _stopping = False

    def stop_on_signals(self: Any) -> None:
        """Called once the app is mounted."""
        if not self.is_headless:
            # A stop signal quits as `q` does and exits 128 + the signal, as the other commands
            # do: SIGTERM's default action would end the process at once, leaving the terminal
            # in the alternate screen, raw and reporting the mouse, the shell unusable until
            # `reset`. SIGINT too: only `kill` sends it, since Ctrl-C in the app's raw terminal is
            # a key. A plain handler rather than the loop's: it runs even while the loop's thread
            # is stuck (in a write, say), and arms the deadline from there.
            self._loop = asyncio.get_running_loop()
            for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
                signal.signal(signum, self._on_signal)

    def get_driver_class(self: Any) -> type[Driver]:
        driver = super().get_driver_class()
        from textual.drivers.linux_driver import LinuxDriver

        if driver is LinuxDriver:
            from tui.widgets.terminal import TerminalDriver

            return TerminalDriver
        return driver

    def terminal_gone(self: Any) -> None:
        """The terminal went away under the app (an SSH session dropped, a window closed):
        a hang-up, whether or not the kernel sent SIGHUP."""
        self._arm_deadline(128 + signal.SIGHUP)
        self._stop_signal(signal.SIGHUP)

    def _on_signal(self: Any, signum: int, _frame: object) -> None:
        self._arm_deadline(128 + signum)
        loop = self._loop
        if loop is not None:
            with contextlib.suppress(RuntimeError):  # the loop has closed: the deadline stands
                loop.call_soon_threadsafe(self._stop_signal, signum)

    def _stop_signal(self: Any, signum: int) -> None:
        # A second signal while closing changes nothing (and must not cancel the close).
        if not self._stopping:
            self._stopping = True
            self.run_worker(self._quit(128 + signum), group="stop-signal")

    def _arm_deadline(self: Any, return_code: int) -> None:
        """However the close goes, the process is gone `STOP_DEADLINE_S` after a stop signal:
        the worker killed, then this process, with no further word to the terminal."""
        if self._deadline is None:
            self._deadline = threading.Timer(STOP_DEADLINE_S, self._hard_stop, args=(return_code,))
            self._deadline.daemon = True
            self._deadline.start()

    def _hard_stop(self: Any, return_code: int) -> None:
        kill_now = getattr(self.engine, "kill_now", None)
        if kill_now is not None:
            with contextlib.suppress(Exception):
                kill_now()
        give_back = getattr(self._driver, "give_back_now", None)
        if give_back is not None:
            with contextlib.suppress(Exception):
                give_back()
        os._exit(return_code)
