"""The settings matrix: one snippet under every fullgraph x dynamic x backend, one warm worker.

It answers "which settings forbid or allow the failure I am looking at" at a glance. Torch-free.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import asdict, dataclass
from typing import Any

from playground.client import RunCancelled, WorkerClient
from playground.settings import MAX_MIN_RUN_TIME_S, MAX_TIMEOUT_S, Settings, dynamic_name, name_arg, seconds_arg
from playground.snippet import prepare_run

DEFAULT_BACKENDS = ("eager", "inductor")


@dataclass(frozen=True)
class Cell:
    """One combination's outcome."""

    fullgraph: bool
    dynamic: bool | None
    backend: str
    graphs: int
    breaks: int
    recompiles: int
    limit_hit: bool
    raised: str | None
    error_kind: str | None
    equivalence: str  # "ok" | "FAIL" | "n/a"
    compile_s: float | None
    speedup: float | None

    @classmethod
    def from_report(cls, settings: Settings, report: dict[str, Any]) -> Cell:
        error = report.get("error") or None
        eq = report.get("equivalence")
        timings = report.get("timings") or {}
        raised = None
        if error:
            raised = f"{error.get('type')}: {error.get('message', '')}".splitlines()[0][:160]
        return cls(
            fullgraph=settings.fullgraph,
            dynamic=settings.dynamic,
            backend=settings.backend,
            graphs=int(report.get("graph_count", 0)),
            breaks=int(report.get("graph_break_count", 0)),
            recompiles=int(report.get("recompile_count", 0)),
            limit_hit=bool(report.get("recompile_limit_hit")),
            raised=raised,
            error_kind=error.get("kind") if error else None,
            equivalence="n/a" if not eq else ("ok" if eq.get("ok") else "FAIL"),
            compile_s=timings.get("compile_s"),
            speedup=timings.get("speedup"),
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def combinations(base: Settings, backends: tuple[str, ...] = DEFAULT_BACKENDS) -> list[Settings]:
    """Every fullgraph x dynamic x backend, the base's other settings kept."""
    out = []
    for backend, fullgraph, dynamic in itertools.product(backends, (False, True), (None, True, False)):
        out.append(
            Settings(
                fullgraph=fullgraph,
                dynamic=dynamic,
                backend=backend,
                mode=base.mode if backend == "inductor" else None,
                device=base.device,
                cold=base.cold,
            )
        )
    return out


async def run_matrix(
    client: Any,
    path: str,
    cells: list[Settings],
    *,
    timing: bool = True,
    min_run_time: float = 0.05,
    on_progress: Callable[[int, int, Settings], None] | None = None,
) -> AsyncIterator[tuple[int, Cell]]:
    """Yield (index, cell) as each combination finishes; cancel with client.cancel(). `client`
    is a WorkerClient or anything with its async run()."""
    for i, settings in enumerate(cells):
        if on_progress is not None:
            on_progress(i, len(cells), settings)
        try:
            report = await client.run(path, settings, timing=timing, min_run_time=min_run_time)
        except RunCancelled:
            return
        yield i, Cell.from_report(settings, report)


def format_table(cells: list[Cell]) -> str:
    head = f"{'backend':<10}{'fullgraph':<10}{'dynamic':<8}{'graphs':>7}{'breaks':>7}{'recomp':>7}  {'limit':<6}{'equiv':<6}{'compile':>9}{'speedup':>9}  raised"
    rows = [head, "-" * len(head)]
    for c in cells:
        compile_s = "" if c.compile_s is None else f"{c.compile_s:.3f}s"
        speed = "" if c.speedup is None else f"{c.speedup:.2f}x"
        rows.append(
            f"{c.backend:<10}{('on' if c.fullgraph else 'off'):<10}{dynamic_name(c.dynamic):<8}"
            f"{c.graphs:>7}{c.breaks:>7}{c.recompiles:>7}  {('HIT' if c.limit_hit else 'no'):<6}{c.equivalence:<6}"
            f"{compile_s:>9}{speed:>9}  {c.raised or 'no'}"
        )
    return "\n".join(rows)


def _backends_arg(text: str) -> tuple[str, ...]:
    names = tuple(name_arg(b.strip()) for b in text.split(",") if b.strip())
    if not names:
        raise argparse.ArgumentTypeError("give at least one backend, e.g. eager,inductor")
    return names


def matrix_main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="compile-playground matrix")
    p.add_argument("snippet")
    p.add_argument("--json", action="store_true", help="one JSON object: {cells: [...]} ")
    p.add_argument("--backends", type=_backends_arg, default=DEFAULT_BACKENDS, help="comma-separated (eager,inductor)")
    p.add_argument("--no-timing", dest="timing", action="store_false")
    p.add_argument("--min-run-time", type=seconds_arg(0, MAX_MIN_RUN_TIME_S), default=0.05)
    p.add_argument("--timeout", type=seconds_arg(0, MAX_TIMEOUT_S), default=120.0)
    args = p.parse_args(argv)
    # The snippet's other settings (mode, device, cold) are kept in every cell.
    prepared = prepare_run(args.snippet)
    if prepared.error is not None:
        print(
            f"compile-playground: settings error (line {prepared.error['line']}): {prepared.error['message']}",
            file=sys.stderr,
        )
        return 2
    cells_settings = combinations(prepared.settings, args.backends)

    async def go() -> list[Cell]:
        client = WorkerClient(timeout_s=args.timeout)
        done: list[Cell] = []
        try:
            await client.start()

            def progress(i: int, n: int, s: Settings) -> None:
                print(f"[{i + 1}/{n}] {s.label()}", file=sys.stderr, flush=True)

            async for _, cell in run_matrix(
                client,
                args.snippet,
                cells_settings,
                timing=args.timing,
                min_run_time=args.min_run_time,
                on_progress=progress,
            ):
                done.append(cell)
        finally:
            await client.close()
        return done

    try:
        cells = asyncio.run(go())
    except KeyboardInterrupt:
        return 130
    if args.json:
        print(json.dumps({"snippet": args.snippet, "cells": [c.to_dict() for c in cells]}))
    else:
        print(format_table(cells))
    snippet_errors = [c for c in cells if c.error_kind in ("snippet", "worker")]
    return 2 if snippet_errors and len(snippet_errors) == len(cells) else 0
