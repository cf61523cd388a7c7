"""The command line's spelling of settings and runs: argparse types and the flag groups that
`check`, `watch`, `matrix` and the app share. Each settings flag defaults to "not given", so
`overrides_of(args)` holds exactly what the user typed. Torch-free.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from playground.cli.counts import whole_number
from playground.engine.passes import Passes
from playground.engine.program import ProgramOptions, ProgramRun
from playground.engine.run_request import RunFlags
from playground.engine.settings import (
    DEVICES,
    MAX_RANKS,
    MODES,
    NAME,
    SETTING_KEYS,
    STANCES,
    SettingsError,
    check_value,
    parse_config_assignment,
    parse_dynamic,
    shown_value,
)


class Parser(argparse.ArgumentParser):
    """argparse, and where a file whose name starts with '-' was taken for an option (`check
    -x.py` says only that a snippet is required), how to name it."""

    _argv: Sequence[str] = ()

    def parse_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:  # type: ignore[override]
        self._argv = list(sys.argv[1:] if args is None else args)
        return super().parse_args(args, namespace)

    def error(self, message: str) -> NoReturn:
        named = next((a for a in self._argv if a.startswith("-") and os.path.isfile(a)), None)
        if named is not None:
            message += f" ('{named}' is a file here: name it ./{named})"
        super().error(message)


#: Upper bounds of the duration flags (seconds): past them a typo, not a wish (and 1e12 s
#: overflows the worker's faulthandler timer).
MAX_TIMEOUT_S, MAX_MIN_RUN_TIME_S = 86_400.0, 3_600.0


def overrides_of(namespace: Any) -> dict[str, Any]:
    """The setting flags an argparse namespace holds: only those given (the flags default to
    argparse.SUPPRESS, so an absent attribute means "not given")."""
    return {key: getattr(namespace, key) for key in SETTING_KEYS if hasattr(namespace, key)}


# --- argparse's `type=` ----------------------------------------------------------------------


def dynamic_arg(text: str) -> bool | None:
    """--dynamic auto|true|false (not empty: the flag given with no value is a slip, as for --mode)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty value: give auto, true or false")
    try:
        return parse_dynamic(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def name_arg(text: str) -> str:
    """--backend NAME: a name as torch spells them (which ones exist, the worker says)."""
    if not NAME.fullmatch(text):
        raise argparse.ArgumentTypeError(
            f"{shown_value(text)} is not a backend name (letters, digits, _ . : -; e.g. eager, inductor)"
        )
    return text


def mode_arg(text: str) -> str | None:
    """--mode NAME: default or one of torch.compile's modes."""
    try:
        return check_value("mode", text)
    except SettingsError:
        allowed = ", ".join(["default"] + [m for m in MODES if m])
        raise argparse.ArgumentTypeError(f"{shown_value(text)} is not a mode; allowed: {allowed}") from None


def config_arg(text: str) -> tuple[str, Any]:
    """--config KEY=VALUE (`parse_config_assignment`)."""
    try:
        return parse_config_assignment(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def stance_arg(text: str) -> str:
    """--stance NAME: one of torch.compiler.set_stance's stances."""
    try:
        return check_value("stance", text)
    except SettingsError:
        raise argparse.ArgumentTypeError(
            f"{shown_value(text)} is not a stance; allowed: {', '.join(STANCES)}"
        ) from None


def ranks_arg(text: str) -> int:
    """--ranks N: how many processes torch.distributed joins for the run (1 to MAX_RANKS)."""
    value = whole_number(text)
    if value is None or not 1 <= value <= MAX_RANKS:
        raise argparse.ArgumentTypeError(
            f"{shown_value(text)} is not a number of ranks; give a whole number from 1 to {MAX_RANKS}"
        )
    return value


def seconds_arg(low: float, high: float, *, zero_ok: bool = False) -> Any:
    """An argparse type for a duration in seconds: finite, > 0 (or >= 0) and at most `high`."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except (ValueError, OverflowError):
            raise argparse.ArgumentTypeError(f"{shown_value(text)} is not a number of seconds") from None
        ok = math.isfinite(value) and (value >= low if zero_ok else value > low) and value <= high
        if not ok:
            least = f">= {low:g}" if zero_ok else f"> {low:g}"
            raise argparse.ArgumentTypeError(f"{text} is out of range: give seconds {least} and <= {high:g}")
        return value

    return parse


# --- flag groups -----------------------------------------------------------------------------


def add_setting_flags(
    p: argparse.ArgumentParser,
    only: tuple[str, ...] | None = None,
    title: str = "settings (override the snippet's SETTINGS)",
) -> None:
    """The settings flags (`only` those settings, when given: bisect takes four); each defaults
    to "not given" (absent from the namespace), so that `overrides_of(args)` holds exactly what
    the user typed: --dynamic auto is {"dynamic": None}."""
    g = p.add_argument_group(title)
    given = {"default": argparse.SUPPRESS}

    def add(setting: str, *names: str, **kwargs: Any) -> None:
        if only is None or setting in only:
            g.add_argument(*names, **kwargs, **given)

    add("fullgraph", "--fullgraph", dest="fullgraph", action="store_true", help="fullgraph=True")
    add("fullgraph", "--no-fullgraph", dest="fullgraph", action="store_false", help="fullgraph=False")
    add("dynamic", "--dynamic", type=dynamic_arg, metavar="auto|true|false")
    add("backend", "--backend", type=name_arg, metavar="NAME", help="eager, aot_eager, inductor, …")
    add("mode", "--mode", type=mode_arg, metavar="NAME", help="default, reduce-overhead, max-autotune, …")
    add("device", "--device", choices=DEVICES)
    add(
        "cold",
        "--cold",
        action="store_true",
        help="disable Inductor's FX/AOT caches so the first call is a true cold compile",
    )
    # Torch's own switches; --config adds to the snippet's SETTINGS["config"].
    add(
        "config",
        "--config",
        dest="config",
        action="append",
        type=config_arg,
        metavar="KEY=VALUE",
        help="set torch._dynamo.config / torch._inductor.config for the run, e.g. "
        "dynamo.capture_scalar_outputs=true (repeatable)",
    )
    add("stance", "--stance", type=stance_arg, metavar="NAME", help="torch.compiler.set_stance, e.g. fail_on_recompile")
    add(
        "error_on_graph_break",
        "--error-on-graph-break",
        dest="error_on_graph_break",
        action="store_true",
        help="a graph break raises (torch._dynamo.error_on_graph_break)",
    )
    add(
        "ranks",
        "--ranks",
        type=ranks_arg,
        metavar="N",
        help="run in N processes joined by torch.distributed, as torchrun would (gloo on CPU)",
    )
    add(
        "target",
        "--target",
        choices=("model", "fn"),
        help="which to compile when the snippet defines both model and fn (default: model)",
    )


def add_run_flags(p: argparse.ArgumentParser, min_run_time: float = 0.2) -> None:
    r = p.add_argument_group("run")
    r.add_argument(
        "--timeout",
        type=seconds_arg(0, MAX_TIMEOUT_S),
        default=None,
        metavar="S",
        help=f"kill a run after S seconds (120, a program's 600; at most {MAX_TIMEOUT_S:g})",
    )
    r.add_argument("--no-timing", dest="timing", action="store_false", help="skip the steady-state timings")
    r.add_argument(
        "--min-run-time",
        type=seconds_arg(0, MAX_MIN_RUN_TIME_S),
        default=min_run_time,
        metavar="S",
        help=f"per side, for timings ({min_run_time:g})",
    )


def add_view_flags(p: argparse.ArgumentParser) -> None:
    """What a run adds beyond the report, each at a cost: the app asks for the same by key
    (k, 0 and u), and check, watch and the app take the same flags."""
    v = p.add_argument_group("views that cost a run more")
    v.add_argument(
        "--kernels",
        action="store_true",
        help="profile Inductor's kernels after the timing (compiles with kernel profiling and provenance)",
    )
    v.add_argument(
        "--guard-what-if",
        action="store_true",
        help="after the timing, recompile under torch's guard filter and try skip_guard_eval_unsafe: "
        "what each would save the timed call, and the risk (unsafe switches, measured, never applied to the run)",
    )
    v.add_argument(
        "--code",
        action="store_true",
        help="the code Dynamo wrote, decompiled by depyf in a second run of the snippet (the app's Code pane)",
    )


def passes_of(args: argparse.Namespace) -> Passes:
    """The passes add_view_flags' flags ask for."""
    fixes = "all" if getattr(args, "try_fixes", False) else ""
    return Passes(kernels=args.kernels, dynamo_code=args.code, guard_what_if=args.guard_what_if, fixes=fixes)


def add_fixes_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--try-fixes",
        action="store_true",
        help="after the run, try the remedies torch offers for each break and recompile, each a variant run "
        "of the same file (never edited): what each removes, its values, its speedup",
    )


def run_flags_of(args: argparse.Namespace) -> RunFlags:
    """What add_run_flags' flags ask of every run: the timings. (--timeout is the client's
    own, for every run it makes.)"""
    return RunFlags(timing=args.timing, min_run_time=args.min_run_time)


def add_present_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--present",
        metavar="DIR",
        help="publish every complete run to the session folder DIR for `compile-playground follow DIR` "
        "(made 0755 if new: its permissions decide who may follow; docs/workshop.md)",
    )


def split_program_args(argv: list[str]) -> tuple[list[str], list[str]]:
    """The command line before the first `--`, and a program's own arguments after it (its
    sys.argv[1:]): `check train.py --backend eager -- --epochs 2`."""
    if "--" not in argv:
        return argv, []
    at = argv.index("--")
    return argv[:at], argv[at + 1 :]


def add_program_flags(p: argparse.ArgumentParser) -> None:
    """How a program (a file that calls torch.compile itself: engine/program.py) runs."""
    g = p.add_argument_group("programs (a file that calls torch.compile itself; its own arguments after --)")
    g.add_argument(
        "--program",
        action="store_true",
        help="run the file as `python FILE` even though it defines model or fn",
    )
    g.add_argument(
        "--snippet",
        action="store_true",
        dest="as_snippet",
        help="run the file as a snippet (its model or fn called with inputs()) even though it looks like a program",
    )
    g.add_argument(
        "--max-calls",
        type=count_arg,
        metavar="N",
        help="stop a program after N calls of its compiled callables (a report of what ran, not an error)",
    )
    g.add_argument(
        "--max-seconds",
        type=seconds_arg(0, MAX_TIMEOUT_S),
        metavar="S",
        help="stop a program after S seconds (a report of what ran, not an error)",
    )
    g.add_argument(
        "--compare-calls",
        type=count_arg,
        metavar="N",
        help="compare the first N calls of each compiled callable with the eager reference (default 20); "
        "the reference runs the program only as far as those calls reach",
    )
    g.add_argument(
        "--callable",
        type=callable_arg,
        metavar="NAME",
        help="the setting flags act on this compiled callable only (its name in the report, or NAME#N)",
    )


def callable_arg(text: str) -> str:
    """--callable: a callable's report key, one printable line."""
    if not text.strip() or not text.isprintable() or len(text) > 200:
        raise argparse.ArgumentTypeError(f"{shown_value(text)} is not a callable's name (as the report shows it)")
    return text.strip()


def count_arg(text: str) -> int:
    """A positive whole number (--max-calls, --compare-calls)."""
    value = whole_number(text)
    if value is None and whole_number(text.strip().removeprefix("-")) is not None:
        value = -1  # a negative count: out of range, said as such
    if value is None:
        raise argparse.ArgumentTypeError(f"{shown_value(text)} is not a whole number") from None
    if value < 1 or value > 1_000_000_000:
        raise argparse.ArgumentTypeError(f"{text} is out of range: give a number of calls from 1 to 1000000000")
    return value


def program_of(
    args: argparse.Namespace, text: str | None, program_args: list[str], typed: str = ""
) -> ProgramRun | None:
    """The run's program mode for a file's `text` (None: it runs as a snippet). The toggled
    settings are the setting flags given, which then replace what the program passes; `typed`
    the file as the command line spelled it (the program's sys.argv[0])."""
    return program_options(args, program_args).run_for(text, tuple(overrides_of(args)), argv0=typed)


def program_options(args: argparse.Namespace, program_args: list[str]) -> ProgramOptions:
    """The command line's program flags, held for every save of a watched or opened file."""
    return ProgramOptions(
        args=tuple(program_args),
        max_calls=getattr(args, "max_calls", None),
        max_seconds=getattr(args, "max_seconds", None),
        forced=bool(getattr(args, "program", False)),
        only=getattr(args, "callable", None),
        compare_calls=getattr(args, "compare_calls", None),
        snippet=bool(getattr(args, "as_snippet", False)),
    )
