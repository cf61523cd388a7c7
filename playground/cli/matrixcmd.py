"""`compile-playground matrix`: the settings matrix and the ablation ladder from the command
line, as a table or one JSON object (the engine side is playground.engine.matrix)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from playground.cli.flags import (
    MAX_MIN_RUN_TIME_S,
    MAX_TIMEOUT_S,
    Parser,
    add_program_flags,
    add_setting_flags,
    mode_arg,
    name_arg,
    overrides_of,
    program_options,
    seconds_arg,
    split_program_args,
)
from playground.engine.client import WorkerClient
from playground.engine.matrix import (
    DEFAULT_BACKENDS,
    MATRIX_AXES,
    Cell,
    combinations,
    compile_split_words,
    first_divergence,
    ladder_stages,
    ladder_summary,
    remaining_words,
    run_matrix,
)
from playground.engine.run_request import RunFlags
from playground.engine.settings import MODES, Settings, dynamic_name
from playground.engine.snippet import prepare_run


def format_ladder(cells: list[Cell]) -> str:
    """The ladder as text: one line per stage, then the verdict."""
    rows = [f"{'stage':<28}{'equiv':<6}{'diverged':<10}{'max abs':>10}{'max rel':>10}{'dynamo/backend':>16}  raised"]
    rows.append("-" * len(rows[0]))
    for c in cells:
        size = "" if c.max_abs is None else f"{c.max_abs:.3g}"
        rel = "" if c.max_rel is None else f"{c.max_rel:.3g}"
        rows.append(
            f"{c.stage:<28}{c.equivalence:<6}{c.diverged or '-':<10}{size:>10}{rel:>10}"
            f"{compile_split_words(c):>16}  {c.raised or 'no'}"
        )
    return "\n".join([*rows, "", COMPILE_SPLIT_NOTE, ladder_summary(cells)])


#: Under the text tables: what the dynamo/backend column holds.
COMPILE_SPLIT_NOTE = (
    "compile: the first call's cold compile; dynamo/backend: seconds in Dynamo's tracing / in the "
    "backend over all the run's compiles (recompiles included), from torch's compile metrics"
)


def format_table(cells: list[Cell]) -> str:
    head = (
        f"{'backend':<10}{'fullgraph':<10}{'dynamic':<8}{'graphs':>7}{'breaks':>7}{'recomp':>7}  {'limit':<6}"
        f"{'equiv':<6}{'compile':>9}{'dynamo/backend':>16}{'speedup':>9}  raised"
    )
    rows = [head, "-" * len(head)]
    for c in cells:
        compile_s = "" if c.compile_s is None else f"{c.compile_s:.3f}s"
        speed = c.speedup_word
        rows.append(
            f"{c.backend:<10}{('on' if c.fullgraph else 'off'):<10}{dynamic_name(c.dynamic):<8}"
            f"{c.graphs:>7}{c.breaks:>7}{c.recompiles:>7}  {('HIT' if c.limit_hit else 'no'):<6}{c.equivalence:<6}"
            f"{compile_s:>9}{compile_split_words(c):>16}{speed:>9}  {c.raised or 'no'}"
        )
    return "\n".join([*rows, "", COMPILE_SPLIT_NOTE])


def _backends_arg(text: str) -> tuple[str, ...]:
    names = tuple(name_arg(b.strip()) for b in text.split(",") if b.strip())
    if not names:
        raise argparse.ArgumentTypeError("give at least one backend, e.g. eager,inductor")
    return names


def _modes_arg(text: str) -> tuple[str | None, ...]:
    """--modes default,max-autotune: the inductor modes the ladder ends with; `all` for every one."""
    if text.strip() == "all":
        return MODES
    return tuple(dict.fromkeys(mode_arg(m.strip()) for m in text.split(",") if m.strip())) or (None,)


def _parser() -> argparse.ArgumentParser:
    p = Parser(prog="compile-playground matrix")
    p.add_argument("snippet")
    p.add_argument("--json", action="store_true", help="one JSON object: {cells: [...]} ")
    p.add_argument("--backends", type=_backends_arg, default=DEFAULT_BACKENDS, help="comma-separated (eager,inductor)")
    p.add_argument(
        "--ladder",
        action="store_true",
        help="eager -> aot_eager -> aot_eager_decomp_partition -> inductor: the first stage that diverges",
    )
    p.add_argument(
        "--modes",
        type=_modes_arg,
        default=(None,),
        metavar="M,M",
        help="with --ladder: the inductor modes to end with (default; e.g. default,max-autotune, or all)",
    )
    # The other settings (mode, device, cold, torch's switches) hold for every cell; the
    # matrix varies fullgraph, dynamic and backend itself, the ladder only the backend.
    add_setting_flags(p)
    add_program_flags(p)
    p.add_argument("--no-timing", dest="timing", action="store_false")
    p.add_argument("--min-run-time", type=seconds_arg(0, MAX_MIN_RUN_TIME_S), default=0.05)
    p.add_argument("--timeout", type=seconds_arg(0, MAX_TIMEOUT_S), default=120.0)
    return p


async def _run_cells(args: argparse.Namespace, cells_settings: list[Settings]) -> list[Cell]:
    """Every cell on one worker, in order, with a progress line per cell on stderr."""
    client = WorkerClient(timeout_s=args.timeout)
    done: list[Cell] = []
    try:
        await client.start()

        def progress(i: int, n: int, s: Settings) -> None:
            left = remaining_words(done, n - i)
            print(f"[{i + 1}/{n}] {s.label()}" + (f"  ({left})" if left else ""), file=sys.stderr, flush=True)

        async for _, cell in run_matrix(
            client,
            args.snippet,
            cells_settings,
            flags=RunFlags(timing=args.timing, min_run_time=args.min_run_time),
            on_progress=progress,
            program=program_options(args, args.program_args),
            axes=("backend", "mode") if args.ladder else MATRIX_AXES,
        ):
            done.append(cell)
    finally:
        await client.close()
    return done


def _json_out(
    args: argparse.Namespace, settings: Settings, cells: list[Cell], cells_settings: list[Settings]
) -> dict[str, Any]:
    """The --json object: the settings, every cell, and for --ladder the verdict."""
    out: dict[str, Any] = {
        "snippet": args.snippet,
        "settings": settings.to_dict(),
        "cells": [c.to_dict() for c in cells],
    }
    if args.ladder:
        found = first_divergence(cells)
        out["ladder"] = {
            "stages": [c.stage for c in cells],
            "first_divergence": found.to_dict() if found else None,
            "summary": ladder_summary(cells, len(cells_settings)),
        }
    return out


def matrix_main(argv: list[str]) -> int:
    ours, program_args = split_program_args(argv)
    args = _parser().parse_args(ours)
    args.program_args = program_args
    # The snippet's other settings (mode, device, cold) are kept in every cell.
    prepared = prepare_run(args.snippet, overrides_of(args))
    if prepared.error is not None:
        print(
            f"compile-playground: settings error (line {prepared.error.line}): {prepared.error.message}",
            file=sys.stderr,
        )
        return 2
    if args.ladder:
        cells_settings = ladder_stages(prepared.settings, args.modes)
    else:
        cells_settings = combinations(prepared.settings, args.backends)
    try:
        cells = asyncio.run(_run_cells(args, cells_settings))
    except KeyboardInterrupt:
        return 130
    if args.json:
        print(json.dumps(_json_out(args, prepared.settings, cells, cells_settings)))
    else:
        print(format_ladder(cells) if args.ladder else format_table(cells))
        if args.ladder and first_divergence(cells) is not None:
            from playground.cli.bisectcmd import suggestion

            print(suggestion(args.snippet))
    snippet_errors = [c for c in cells if c.error_kind in ("snippet", "worker")]
    return 2 if snippet_errors and len(snippet_errors) == len(cells) else 0
