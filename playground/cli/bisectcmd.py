"""`compile-playground bisect SNIPPET [--fullgraph] [--dynamic D] [--mode M] [--target T]
[--config KEY=VALUE]... [--json]`.

Torch-free: the bisection runs in its own worker process (`playground.worker.run.bisection.bisect`,
started by module name in a new process group), which streams progress lines and one result.
Ctrl-C, SIGTERM and SIGHUP kill that process group, so no step's process is left behind."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from playground.cli.flags import Parser, add_setting_flags, config_arg, seconds_arg
from playground.engine.bisecting import bisect_command, read_line
from playground.engine.events import BisectProgress
from playground.engine.report.bisection import BisectResult

EXIT_ERROR = 2
#: What bisect's settings flags may set (the worker's bisect_snippet.SETTING_KEYS).
SETTING_FLAGS = ("fullgraph", "dynamic", "mode", "target")


def workaround_flags(workaround: dict[str, Any]) -> str:
    """A workaround as the command-line flags that apply it, each quoted for a shell: a list
    value's brackets and quotes would otherwise be the shell's."""
    config = workaround.get("config", {})
    return " ".join(f"--config {shlex.quote(f'{key}={json.dumps(value)}')}" for key, value in config.items())


def _parser() -> argparse.ArgumentParser:
    p = Parser(prog="compile-playground bisect")
    p.add_argument("snippet", help="the snippet file")
    # The settings a step compiles under, over the snippet's SETTINGS (as check's flags are);
    # each absent unless given. The backend is the bisection's own: inductor, stage by stage.
    title = "settings (override the snippet's SETTINGS; the backend is inductor's stages)"
    add_setting_flags(p, only=SETTING_FLAGS, title=title)
    p.add_argument(
        "--config",
        dest="config",
        action="append",
        type=config_arg,
        default=[],
        metavar="KEY=VALUE",
        help="set torch._dynamo.config / torch._inductor.config in each step",
    )
    p.add_argument(
        "--timeout",
        type=seconds_arg(0, 86400),
        default=None,
        metavar="S",
        help="the most seconds one step (a fresh process: load, eager, compile, compare) may take (default 600)",
    )
    p.add_argument("--json", action="store_true", help="print the contract's JSON result")
    p.add_argument(
        "--markdown",
        metavar="FILE",
        help="write the result as Markdown to FILE ('-': to stdout), never over a file that is not our export",
    )
    p.add_argument("--force", action="store_true", help="with --markdown FILE: replace an existing file")
    return p


def setting_flags(args: argparse.Namespace) -> tuple[tuple[str, Any], ...]:
    """The settings flags given on the command line, in --setting's order."""
    return tuple((key, getattr(args, key)) for key in SETTING_FLAGS if hasattr(args, key))


def result_markdown(snippet: str, result: BisectResult) -> str:
    """The bisection as a Markdown section: what was found, the first diverging op, the
    workaround as the flags that apply it."""
    lines = [f"# Bisection of `{os.path.basename(snippet)}`", ""]
    b = result.bisection
    if b is None:
        return "\n".join([*lines, f"No bisection: {result.reason}.", ""])
    rows = [("backend", b.backend), ("subsystem", b.subsystem), ("application number", b.bisect_number)]
    rows += [("torch's debug info", b.debug_info), ("snippet line", b.line), ("steps", b.steps)]
    lines += ["| found | |", "|---|---|"]
    lines += [f"| {name} | `{value}` |" for name, value in rows if value is not None]
    if b.first_diverging_op is not None:
        lines += ["", f"{b.first_diverging_op.words()}, by {b.first_diverging_op.how}."]
    if b.workaround:
        flags = workaround_flags(b.workaround)
        lines += ["", f"Workaround: `{flags}`."]
    else:
        lines += ["", "No config switch turns this off: the op and line above are where to look."]
    return "\n".join([*lines, ""])


def suggestion(snippet: str) -> str:
    """matrix --ladder's line when a stage diverges: where to look next."""
    return f"next: compile-playground bisect {snippet} names the backend, subsystem and op that diverge"


def result_lines(result: BisectResult) -> list[str]:
    b = result.bisection
    if b is None:
        return [f"no bisection: {result.reason}"]
    lines = [f"culprit: backend {b.backend}" + (f", subsystem {b.subsystem}" if b.subsystem else "")]
    if b.bisect_number is not None:
        lines.append(f"bisect number: {b.bisect_number}")
    if b.debug_info:
        lines.append(f"last applied: {b.debug_info}")
    if b.line is not None:
        lines.append(f"snippet line: {b.line}")
    if b.first_diverging_op is not None:
        lines.append(b.first_diverging_op.words())
        lines.append(f"  by {b.first_diverging_op.how}")
    if b.workaround:
        flags = workaround_flags(b.workaround)
        lines.append(f"workaround: {flags}")
    if b.confidence:
        lines.append(f"confidence: {b.confidence} ({b.recheck})")
    lines.append(f"steps: {b.steps}")
    return lines


def bisect_main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    refused = _refused(args)
    if refused is not None:
        print(f"compile-playground bisect: {refused}", file=sys.stderr)
        return EXIT_ERROR
    run = _run(args)
    if run.stopped_by is not None:
        with contextlib.suppress(OSError):  # a closed terminal (SIGHUP) takes no message
            print(
                f"compile-playground bisect: stopped by {signal.Signals(run.stopped_by).name}; no step left running",
                file=sys.stderr,
            )
        return 128 + run.stopped_by
    if run.problem is not None or run.result is None:
        problem = run.problem or "the bisection ended without a result"
        print(f"compile-playground bisect: {problem}", file=sys.stderr)
        return EXIT_ERROR
    return _shown(args, run.result)


def _refused(args: argparse.Namespace) -> str | None:
    """What keeps the bisection from starting: the snippet is not a file, or --markdown's file
    is not ours to write."""
    if not os.path.isfile(args.snippet):
        what = "not a file" if os.path.exists(args.snippet) else "no such file"
        return f"{what}: {args.snippet}"
    if args.markdown and args.markdown != "-":
        from playground.engine.exports import ExportError, check_export_target

        try:
            check_export_target(args.markdown, [Path(args.snippet)], args.force)
        except ExportError as exc:
            return f"markdown not written: {exc}"
    return None


@dataclass(frozen=True)
class _Run:
    """How the bisection's process ended: its result, its error in words, or the signal that
    stopped us (and it)."""

    result: BisectResult | None = None
    problem: str | None = None
    stopped_by: int | None = None


def _run(args: argparse.Namespace) -> _Run:
    """The bisection's process, in a process group of its own, read to its end: its progress
    lines to stderr (unless --json), its result or its error. Ctrl-C, SIGTERM and SIGHUP stop the
    group; whatever of it is left at the end is killed."""
    received: list[int] = []
    proc: subprocess.Popen[str] | None = None

    def stop(signum: int, _frame: Any) -> None:
        # SIGTERM first: the bisection kills its step and removes its state dir; the group is
        # killed outright below if it is still there.
        received.append(signum)
        if proc is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)

    # The handlers come first: a signal between the start and them would leave the bisection,
    # in a session of its own, running without us.
    old = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        proc = subprocess.Popen(
            bisect_command(args.snippet, args.config, timeout_s=args.timeout, settings=setting_flags(args)),
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
    except BaseException:
        for s, handler in old.items():
            signal.signal(s, handler)
        raise
    if received:
        stop(received[0], None)
    result: BisectResult | None = None
    problem: str | None = None
    try:
        assert proc.stdout is not None
        for raw in proc.stdout:
            read = read_line(raw)
            if read is None:
                continue
            kind, value = read
            if isinstance(value, BisectProgress) and not args.json:
                print(value.words(), file=sys.stderr)
            elif kind == "result":
                result = value
            elif kind == "error":
                problem = value
        proc.wait()
    finally:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # whatever of the group is left
        proc.wait()
        for s, handler in old.items():
            signal.signal(s, handler)
    return _Run(result, problem, received[0] if received else None)


def _shown(args: argparse.Namespace, result: BisectResult) -> int:
    """The result printed (words, --json, or --markdown -) and written to --markdown FILE."""
    if args.markdown == "-":
        sys.stdout.write(result_markdown(args.snippet, result))
    elif args.json:
        print(json.dumps(result.to_dict()))
    else:
        print("\n".join(result_lines(result)))
    if args.markdown and args.markdown != "-":
        from playground.engine.exports import ExportError, marked, write_export

        try:
            markdown = marked(result_markdown(args.snippet, result))
            write_export(args.markdown, markdown, protected=[Path(args.snippet)], force=args.force)
            print(f"markdown written: {args.markdown}", file=sys.stderr)
        except ExportError as exc:
            print(f"compile-playground bisect: markdown not written: {exc}", file=sys.stderr)
            return EXIT_ERROR
    return 0
