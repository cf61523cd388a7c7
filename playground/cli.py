"""`compile-playground`: the app by default, and the headless `check`, `watch` and `matrix`.

Torch-free: every run goes to the warm worker process.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from playground.client import WorkerClient, WorkerUnavailable
from playground.report import Report
from playground.settings import Settings, parse_dynamic
from playground.snippet import SnippetError, literal_settings, read_snippet

COMMANDS = ("check", "watch", "matrix", "app")
EXIT_OK, EXIT_FINDING, EXIT_ERROR = 0, 1, 2


class _Auto(str):
    """`--dynamic auto` given explicitly: distinct from "not given" (None)."""


def _dynamic_arg(text: str) -> bool | None | str:
    value = parse_dynamic(text)
    return _Auto("auto") if value is None else value


def _add_setting_flags(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("settings (override the snippet's SETTINGS)")
    g.add_argument("--fullgraph", dest="fullgraph", action="store_true", default=None, help="fullgraph=True")
    g.add_argument("--no-fullgraph", dest="fullgraph", action="store_false", help="fullgraph=False")
    g.add_argument("--dynamic", type=_dynamic_arg, default=None, metavar="auto|true|false")
    g.add_argument("--backend", default=None, metavar="NAME", help="eager, aot_eager, inductor, …")
    g.add_argument("--mode", default=None, metavar="NAME", help="default, reduce-overhead, max-autotune, …")
    g.add_argument("--device", default=None, choices=("cpu", "cuda"))
    g.add_argument(
        "--cold",
        action="store_true",
        default=None,
        help="disable Inductor's FX/AOT caches so the first call is a true cold compile",
    )
    r = p.add_argument_group("run")
    r.add_argument("--timeout", type=float, default=120.0, metavar="S", help="kill a run after S seconds (120)")
    r.add_argument("--no-timing", dest="timing", action="store_false", help="skip the steady-state timings")
    r.add_argument("--min-run-time", type=float, default=0.2, metavar="S", help="per side, for timings (0.2)")


def settings_for(path: str | None, args: argparse.Namespace) -> Settings:
    """Defaults, then the snippet's SETTINGS, then the command-line flags."""
    base = Settings()
    if path:
        try:
            # read_snippet refuses FIFOs and devices, which a plain read would block on.
            text = read_snippet(path).text
            base = Settings.from_dict({**base.to_dict(), **literal_settings(text)})
        except (SnippetError, ValueError):
            pass
    overrides = {
        "fullgraph": getattr(args, "fullgraph", None),
        "dynamic": getattr(args, "dynamic", None),
        "backend": getattr(args, "backend", None),
        "mode": getattr(args, "mode", None),
        "device": getattr(args, "device", None),
        "cold": getattr(args, "cold", None),
    }
    if overrides["mode"] == "default":
        overrides["mode"] = None
        base = Settings.from_dict({**base.to_dict(), "mode": None})
    explicit_auto = isinstance(overrides["dynamic"], _Auto)
    if explicit_auto:
        overrides["dynamic"] = None
    settings = base.merged(overrides)
    if explicit_auto:
        settings = Settings.from_dict({**settings.to_dict(), "dynamic": None})
    return settings


def _parser(command: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=f"compile-playground {command}")
    p.add_argument("snippet", help="the snippet file")
    _add_setting_flags(p)
    if command == "check":
        p.add_argument("--json", action="store_true", help="print the contract's JSON report")
        p.add_argument("--fail-on-break", action="store_true", help="exit 1 when there is a graph break")
        p.add_argument("--fail-on-mismatch", action="store_true", help="exit 1 when eager and compiled disagree")
        p.add_argument("--trace", metavar="DIR", help="write torch's structured trace (for tlparse) to DIR")
        p.add_argument("--markdown", nargs="?", const="-", metavar="FILE", help="write a Markdown report")
    if command == "watch":
        p.add_argument("--json-lines", action="store_true", help="one JSON object per line")
        p.add_argument("--poll", action="store_true", help="poll the file instead of inotify")
        p.add_argument(
            "--debounce", type=float, default=0.05, metavar="S", help="wait for a burst of saves to settle (0.05)"
        )
    return p


def parse(command: str, argv: list[str]) -> argparse.Namespace:
    return _parser(command).parse_args(argv)


def exit_code(report: dict[str, Any], args: argparse.Namespace) -> int:
    error = report.get("error") or {}
    if error.get("kind") in ("snippet", "worker", "settings"):
        return EXIT_ERROR
    if getattr(args, "fail_on_break", False) and report.get("graph_break_count", 0) > 0:
        return EXIT_FINDING
    eq = report.get("equivalence") or {}
    if getattr(args, "fail_on_mismatch", False) and eq and not eq.get("ok", True):
        return EXIT_FINDING
    return EXIT_OK


def _public(report: dict[str, Any]) -> dict[str, Any]:
    """The report as printed: internal-only keys dropped."""
    return {k: v for k, v in report.items() if k != "trace_lines"}


async def _check(args: argparse.Namespace) -> int:
    settings = settings_for(args.snippet, args)
    client = WorkerClient(timeout_s=args.timeout)
    try:
        try:
            report = await client.run(
                args.snippet,
                settings,
                timing=args.timing,
                min_run_time=args.min_run_time,
                trace=bool(args.trace),
            )
        except WorkerUnavailable as exc:
            print(f"compile-playground: {exc}", file=sys.stderr)
            return EXIT_ERROR
    finally:
        await client.close()
    if args.trace:
        from playground.exports import write_trace

        log_path = write_trace(report, args.trace)
        print(f"structured trace written: {log_path} (run: tlparse {log_path})", file=sys.stderr)
    if getattr(args, "markdown", None):
        from playground.exports import markdown_report

        text = markdown_report(report)
        if args.markdown == "-":
            sys.stdout.write(text)
        else:
            Path(args.markdown).write_text(text, encoding="utf-8")
            print(f"markdown report written: {args.markdown}", file=sys.stderr)
    if args.json:
        sys.stdout.write(json.dumps(_public(report)) + "\n")
    elif not (getattr(args, "markdown", None) == "-"):
        from playground.textreport import render

        print(render(Report.from_dict(report)))
    code = exit_code(report, args)
    error = report.get("error")
    if code == EXIT_ERROR and error:
        print(f"compile-playground: {Report.from_dict(report).error.one_line()}", file=sys.stderr)  # type: ignore[union-attr]
    return code


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:
        # `check | head`: the reader left. Say nothing more; Python would print a traceback
        # when flushing stdout at exit unless it points somewhere harmless.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FINDING


def _main(argv: list[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("-h", "--help"):
        print(
            "usage: compile-playground [SNIPPET] [settings]        open the app (default: a copy of the bundled snippet)\n"
            "       compile-playground check SNIPPET [--json] …     run once, print a report\n"
            "       compile-playground watch SNIPPET --json-lines … rerun on every save\n"
            "       compile-playground matrix SNIPPET [--json]      every fullgraph x dynamic x backend\n"
            "Run `compile-playground COMMAND --help` for the flags."
        )
        return 0
    command = argv[0] if argv and argv[0] in COMMANDS else "app"
    rest = argv[1:] if argv and argv[0] in COMMANDS else argv
    if command == "check":
        return asyncio.run(_check(parse("check", rest)))
    if command == "watch":
        from playground.watchcmd import watch

        try:
            return asyncio.run(watch(parse("watch", rest)))
        except KeyboardInterrupt:
            return 0
    if command == "matrix":
        from playground.matrix import matrix_main

        return matrix_main(rest)
    return _app(rest)


def _app(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="compile-playground")
    p.add_argument("snippet", nargs="?", help="the snippet file (default: a copy of the bundled one)")
    _add_setting_flags(p)
    args = p.parse_args(argv)
    try:
        from tui.cli import main as tui_main
    except ImportError as exc:  # pragma: no cover - the app is an optional front end
        print(f"compile-playground: the app is not available ({exc}); try `check`", file=sys.stderr)
        return EXIT_ERROR
    overrides = {
        k: v
        for k, v in {
            "fullgraph": args.fullgraph,
            # An explicit --dynamic auto travels as the string "auto" (None means "not given").
            "dynamic": str(args.dynamic) if isinstance(args.dynamic, _Auto) else args.dynamic,
            "backend": args.backend,
            "mode": args.mode,
            "device": args.device,
            "cold": args.cold,
        }.items()
        if v is not None
    }
    result = tui_main(args.snippet, overrides, timeout_s=args.timeout)
    return int(result or 0)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
