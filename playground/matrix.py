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
from playground.settings import Settings, dynamic_name

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


def matrix_main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="compile-playground matrix")
    p.add_argument("snippet")
    p.add_argument("--json", action="store_true", help="one JSON object: {cells: [...]} ")
    p.add_argument("--backends", default=",".join(DEFAULT_BACKENDS), help="comma-separated (eager,inductor)")
    p.add_argument("--no-timing", dest="timing", action="store_false")
    p.add_argument("--min-run-time", type=float, default=0.05)
    p.add_argument("--timeout", type=float, default=120.0)
    args = p.parse_args(argv)
    from playground.cli import settings_for

    base = settings_for(args.snippet, argparse.Namespace())
    cells_settings = combinations(base, tuple(b for b in args.backends.split(",") if b))

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
