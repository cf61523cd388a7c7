"""The command's entry point: `compile-playground` and `python -m playground`. Ctrl-C while the
command line's modules are still importing (the first few tenths of a second) ends the command as
Ctrl-C does later on, exit status 130 and no traceback: main() catches it only once imported."""

from __future__ import annotations

import signal


def main() -> int:
    try:
        from playground.cli.main import main as run

        return run()
    except KeyboardInterrupt:
        return 128 + signal.SIGINT
