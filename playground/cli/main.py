"""`compile-playground`: the app by default, and the headless `check`, `watch` and `matrix`.

Torch-free: every run goes to the warm worker process.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from playground.cli.checkcmd import EXIT_ERROR, EXIT_FINDING, check
from playground.cli.flags import (
    Parser,
    add_fixes_flag,
    add_present_flag,
    add_program_flags,
    add_run_flags,
    add_setting_flags,
    add_view_flags,
    overrides_of,
    passes_of,
    program_options,
    seconds_arg,
    split_program_args,
)
from playground.engine.client import WorkerClient

COMMANDS = ("check", "watch", "matrix", "bisect", "follow", "serve", "app")
#: What ends a headless command: `timeout`/kill, Ctrl-C, a dropped SSH session.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


def _parser(command: str) -> argparse.ArgumentParser:
    p = Parser(prog=f"compile-playground {command}")
    if command == "check":
        p.add_argument("snippet", nargs="+", help="the snippet file(s): several run in turn on one worker")
    else:
        p.add_argument("snippet", help="the snippet file")
    add_setting_flags(p)
    add_run_flags(p)
    add_view_flags(p)
    add_program_flags(p)
    if command == "check":
        p.add_argument("--json", action="store_true", help="print the contract's JSON report")
        p.add_argument("--fail-on-break", action="store_true", help="exit 1 when there is a graph break")
        p.add_argument("--fail-on-mismatch", action="store_true", help="exit 1 when eager and compiled disagree")
        p.add_argument("--trace", metavar="DIR", help="write torch's structured trace (for tlparse) to DIR")
        p.add_argument("--markdown", nargs="?", const="-", metavar="FILE", help="write a Markdown report")
        p.add_argument(
            "--force", action="store_true", help="let --markdown replace an existing file that is not our report"
        )
        add_present_flag(p)
        add_fixes_flag(p)
    if command == "watch":
        p.add_argument("--json-lines", action="store_true", help="one JSON object per line")
        p.add_argument("--poll", action="store_true", help="poll the file instead of inotify")
        add_present_flag(p)
        p.add_argument(
            "--debounce",
            type=seconds_arg(0, 60, zero_ok=True),
            default=0.05,
            metavar="S",
            help="wait for a burst of saves to settle (0.05; 0 reruns at once)",
        )
    return p


def parse(command: str, argv: list[str]) -> argparse.Namespace:
    """`argv` parsed; what follows `--` is a program's own arguments (`args.program_args`)."""
    ours, program_args = split_program_args(argv)
    args = _parser(command).parse_args(ours)
    args.program_args = program_args
    return args


async def guarded(body: Callable[[WorkerClient], Awaitable[int]], timeout_s: float | None) -> int:
    """Run `body` with a fresh client, closing the client (the worker and its process group) on
    any way out, SIGTERM, SIGINT and SIGHUP included: those exit 128+signal, without a
    traceback. A second signal while closing is ignored: it must not interrupt the close."""
    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None
    client = WorkerClient(timeout_s=timeout_s)
    received: list[int] = []
    closing: list[asyncio.Future[Any]] = []

    def on_signal(signum: int) -> None:
        received.append(signum)
        if len(received) > 1 or closing:
            return
        # close() marks the client closed before its first await, so the run cancelled next
        # does not start a fresh worker on its way out.
        closing.append(loop.create_task(client.close()))
        task.cancel()

    for signum in STOP_SIGNALS:
        loop.add_signal_handler(signum, on_signal, signum)
    code = EXIT_ERROR
    try:
        code = await body(client)
    except asyncio.CancelledError:
        if not received:
            raise
        if hasattr(task, "uncancel"):  # Python 3.11+; 3.10 has no cancel count to undo
            task.uncancel()
    finally:
        if not closing:
            closing.append(loop.create_task(client.close()))
        await asyncio.gather(*closing, return_exceptions=True)
    return 128 + received[0] if received else code


def _run_guarded(body: Callable[[WorkerClient], Awaitable[int]], timeout_s: float | None) -> int:
    code = asyncio.run(guarded(body, timeout_s))
    if code > 128:
        # Everything is closed; a late signal must not turn the exit status into a kill.
        for signum in STOP_SIGNALS:
            signal.signal(signum, signal.SIG_IGN)
        # One line, so that a stop is never silent (the exit status alone reads like a crash).
        with contextlib.suppress(OSError, ValueError):  # the terminal may be gone (SIGHUP)
            print(f"compile-playground: stopped by {signal.Signals(code - 128).name}", file=sys.stderr, flush=True)
    return code


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:
        return 128 + signal.SIGINT  # Ctrl-C before a command took over the signals
    except BrokenPipeError:
        # `check | head`: the reader left. Say nothing more; Python would print a traceback
        # when flushing stdout at exit unless it points somewhere harmless.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FINDING


def _end_with_launcher() -> None:
    """Under torchrun: this process ends (SIGTERM, closing its worker as a stop does) when
    torchrun's agent dies, even of SIGKILL. torchrun starts each of its processes in a session of
    its own and never kills them when it is killed itself: the node's rank would otherwise go on
    alone. Linux only (prctl); elsewhere, nothing."""
    from playground.engine.ranks import launch_of

    if launch_of(os.environ) is None:
        return
    import ctypes
    import ctypes.util

    parent = os.getppid()
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the agent died before the prctl: no signal will come
        os.kill(os.getpid(), signal.SIGTERM)


def _main(argv: list[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    _end_with_launcher()
    if argv and argv[0] in ("-h", "--help"):
        print(
            "usage: compile-playground [SNIPPET] [settings]        open the app (default: a copy of the bundled snippet)\n"
            "       compile-playground check SNIPPET… [--json] …    run each once, print its report\n"
            "       compile-playground watch SNIPPET --json-lines … rerun on every save\n"
            "       compile-playground matrix SNIPPET [--json]      every fullgraph x dynamic x backend\n"
            "       compile-playground bisect SNIPPET [--json]      find what in torch.compile diverges\n"
            "       compile-playground [SNIPPET] --present DIR      present: publish each run to DIR\n"
            "       compile-playground follow DIR                   follow a presenter, read-only (p forks)\n"
            "       torchrun … -m playground watch SNIPPET …        one rank of a job across machines, per node\n"
            "       compile-playground serve [SNIPPET|--follow DIR] the app or a follower in a browser\n"
            "Run `compile-playground COMMAND --help` for the flags."
        )
        return 0
    command = argv[0] if argv and argv[0] in COMMANDS else "app"
    rest = argv[1:] if argv and argv[0] in COMMANDS else argv
    if (refused := _not_a_rank(command, rest)) is not None:
        print(f"compile-playground: {refused}", file=sys.stderr)
        return EXIT_ERROR
    if command == "check":
        args = parse("check", rest)
        return _run_guarded(lambda client: check(args, client), args.timeout)
    if command == "watch":
        from playground.cli.watchcmd import watch

        args = parse("watch", rest)
        return _run_guarded(lambda client: watch(args, client), args.timeout)
    if command == "matrix":
        from playground.cli.matrixcmd import matrix_main

        return matrix_main(rest)
    if command == "bisect":
        from playground.cli.bisectcmd import bisect_main

        return bisect_main(rest)
    if command == "follow":
        from playground.cli.followcmd import follow_main

        return follow_main(rest)
    if command == "serve":
        from playground.cli.servecmd import serve_main

        return serve_main(rest)
    return _app(rest)


def _not_a_rank(command: str, rest: list[str]) -> str | None:
    """Why `command` cannot run as one rank of a torchrun job (torchrun started this process:
    engine.ranks.launch_of), or None. Only check and watch run a rank; the app, matrix, bisect
    and serve's app would start one screen or one search per process of the job."""
    from playground.engine.ranks import launch_of

    if command in ("check", "watch", "follow") or (command == "serve" and "--follow" in rest):
        return None
    if launch_of(os.environ) is None:
        return None
    what = {"app": "the app", "serve": "serve's app"}.get(command, command)
    return (
        f"{what} does not run as a rank of a torchrun job: on each node run "
        "`torchrun … -m playground watch SNIPPET --present DIR` (or check), "
        "and `compile-playground follow DIR` to see every rank"
    )


def _app(argv: list[str]) -> int:
    p = Parser(prog="compile-playground")
    p.add_argument("snippet", nargs="?", help="the snippet file (default: a copy of the bundled one)")
    add_setting_flags(p)
    add_run_flags(p)
    add_view_flags(p)
    add_present_flag(p)
    add_program_flags(p)
    ours, program_args = split_program_args(argv)
    args = p.parse_args(ours)
    try:
        from tui.cli import main as tui_main
    except ImportError as exc:  # pragma: no cover - the app is an optional front end
        print(f"compile-playground: the app is not available ({exc}); try `check`", file=sys.stderr)
        return EXIT_ERROR
    result = tui_main(
        args.snippet,
        overrides_of(args),
        timeout_s=args.timeout,
        present=args.present,
        passes=passes_of(args),
        timing=args.timing,
        min_run_time=args.min_run_time,
        program=program_options(args, program_args),
    )
    return int(result or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
