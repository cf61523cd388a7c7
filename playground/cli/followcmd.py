"""`compile-playground follow SESSION`: follow a presenter's session, read-only; fork to play.

The follower itself starts no worker and never imports torch or the engine's client (the import
contracts say so). A fork (`p`) opens the attendee's own playground on their new file as a
child process in the same terminal, with the presenter's settings as flags; quitting it comes
back to following, caught up.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
from pathlib import Path

from playground.engine.session import setting_flags


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="compile-playground follow",
        description="Show a presenter's runs as they land (read-only); p forks the shown run.",
    )
    p.add_argument("session", help="the presenter's session folder (their --present DIR)")
    p.add_argument("--into", default=".", metavar="DIR", help="where forks are written (default: here)")
    p.add_argument(
        "--no-play",
        dest="play",
        action="store_false",
        help="after a fork, print the new file's path and exit instead of opening the playground",
    )
    return p


def play_command(path: Path, flags: list[str]) -> list[str]:
    """The attendee's own playground on `path`: this package's CLI in a fresh interpreter.
    The file's name and the flags' values come from the presenter's folder: the command is
    named (`app`), each value is glued to its flag (`setting_flags`), and the path is absolute,
    so it starts with `/` and no name (`--present=leak.py`, `-x.py`, `check`) is read as
    anything but the file to open. Nothing follows it: after `--` come a program's own
    arguments, so a path there would be the program's argument and the app would open
    ./snippet.py instead."""
    return [sys.executable, "-m", "playground", "app", *flags, str(path.absolute())]


def _play(argv: list[str]) -> int:
    """The playground run until it ends; its exit status, or 128+N when this follower was sent
    signal N meanwhile (SIGTERM, SIGHUP: handed on to the playground, which closes its worker
    and gives the terminal back, and then the follower ends too, never leaving the playground
    drawing on a terminal whose shell has its prompt back)."""
    # The playground owns the terminal and its signals meanwhile; Ctrl-C is a key there, and a
    # `kill -INT` meant for it must not end the follower waiting here (not SIG_IGN: the child
    # would inherit that).
    received: list[int] = []
    child: list[subprocess.Popen[bytes]] = []

    def hand_on(signum: int, _frame: object) -> None:
        received.append(signum)
        if child:
            with contextlib.suppress(OSError):
                child[0].send_signal(signum)

    stops = (signal.SIGTERM, signal.SIGHUP)
    previous = {signal.SIGINT: signal.signal(signal.SIGINT, lambda *_: None)}
    previous.update({s: signal.signal(s, hand_on) for s in stops})
    try:
        child.append(subprocess.Popen(argv))
        if received:  # a signal between the handlers and the start
            hand_on(received[0], None)
        code = child[0].wait()
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    return 128 + received[0] if received else code


def follow_main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    # A folder not made yet is waited for (the presenter may start later); anything else that
    # is there already can never become one.
    if os.path.lexists(args.session) and not os.path.isdir(args.session):
        print(
            f"compile-playground follow: {args.session}: not a folder (a session is the folder a presenter writes)",
            file=sys.stderr,
        )
        return 2
    into = Path(args.into)
    if not into.is_dir():
        print(f"compile-playground follow: --into {args.into}: not a folder", file=sys.stderr)
        return 2
    from tui.workshop.follower import FollowApp, Fork

    # Under `serve` the app speaks to a browser over stdout: no terminal to hand a playground.
    in_browser = "web_driver" in os.environ.get("TEXTUAL_DRIVER", "")
    notice = ""
    while True:
        app = FollowApp(
            args.session,
            directory=into,
            notice=notice,
            stay_after_fork=in_browser,
            # Only a fork that opens a playground runs the presenter's code: that one asks first.
            confirm_run=args.play and not in_browser,
        )
        app.run()
        fork = app.return_value
        if not isinstance(fork, Fork):
            return app.return_code or 0
        if not args.play:
            print(fork.path)
            return 0
        code = _play(play_command(fork.path, setting_flags(fork.settings)))
        if code >= 128 or code < 0:
            return code if code >= 128 else 128 - code  # hung up or killed: no screen to return to
        notice = f"back to following; your copy is {fork.path}"
