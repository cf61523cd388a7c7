"""The command's entry point: `compile-playground` and `python -m playground`. Ctrl-C while the
command line's modules are still importing (the first few tenths of a second) ends the command as
Ctrl-C does later on, exit status 130 and no traceback: main() catches it only once imported, and
Python's own handler would raise it anywhere in between. No process of ours exists yet then."""

from __future__ import annotations

import os
import signal


def _stopped_while_importing(signum: int, _frame: object) -> None:
    os._exit(128 + signum)


signal.signal(signal.SIGINT, _stopped_while_importing)


def main() -> int:
    try:
        from playground.cli.main import main as run

        # From here the command's own handling: main() catches KeyboardInterrupt, and a command
        # that starts processes puts its own handlers in place before it does.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        return run()
    except KeyboardInterrupt:
        return 128 + signal.SIGINT
