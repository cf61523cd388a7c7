"""`compile-playground watch`: one warm worker, a run at start and after every save.

The newest content always wins: a save during a run cancels it, and a report whose content is
older than a save seen since is never printed after a newer one. A save of a module the snippet
imports from its folder reruns it too. Signals and the client's close are the caller's
(`playground.cli.main.guarded`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from playground.cli.textreport import render
from playground.engine.client import RunCancelled, WorkerClient, WorkerUnavailable
from playground.engine.events import DiagnosticsReady, RunEvent, WorkerRestarted
from playground.engine.report import Report
from playground.engine.settings import overrides_of
from playground.engine.snippet import prepare_run
from playground.engine.watch import SnippetWatcher


def _print_line(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def _staged(stage: str, report: Report) -> dict[str, Any]:
    """The contract's line: stage and content_sha256 first, then the report keys."""
    return {"stage": stage, "content_sha256": report.content_sha256, **report.to_dict()} | {"stage": stage}


async def watch(args: argparse.Namespace, client: WorkerClient) -> int:
    """Watch until cancelled; returns 2 when the worker cannot start at all."""
    loop = asyncio.get_running_loop()
    changed = asyncio.Event()
    generation = 0
    overrides = overrides_of(args)

    def on_change() -> None:
        loop.call_soon_threadsafe(changed.set)

    watcher = SnippetWatcher(args.snippet, on_change, debounce_s=args.debounce, poll=args.poll)
    run_task: asyncio.Task[None] | None = None

    def show(stage: str, report: Report) -> None:
        if args.json_lines:
            _print_line(_staged(stage, report))
        elif stage == "complete":
            print(render(report), flush=True)
            print("-" * 72, flush=True)

    async def run_once(gen: int) -> None:
        # Settings are resolved on every run: a save may change SETTINGS.
        prepared = prepare_run(args.snippet, overrides)
        if prepared.error is not None:
            show("complete", prepared.refused_report())
            return

        def on_event(event: RunEvent) -> None:
            if gen != generation:
                return  # a newer save exists: this run's lines are stale
            if isinstance(event, DiagnosticsReady):
                show("diagnostics", event.report)
            elif isinstance(event, WorkerRestarted) and not args.json_lines:
                print(f"worker restarted: {event.reason}", file=sys.stderr)

        try:
            result = await client.run(
                args.snippet, prepared.settings, on_event, timing=args.timing, min_run_time=args.min_run_time
            )
        except RunCancelled:
            return
        if gen != generation:
            return
        report = result.report
        # Narrow the module trigger to what this run imported; after a failure (a helper with a
        # syntax error is never imported) any *.py beside the snippet may be the fix.
        watcher.watch_modules(list(report.local_modules) if report.error is None else None)
        show("complete", report)

    watcher.start()
    if not args.json_lines:
        print(f"watching {args.snippet} ({watcher.mode}); Ctrl-C to stop", file=sys.stderr)
    try:
        try:
            await client.start()
        except WorkerUnavailable as exc:
            print(f"compile-playground: {exc}", file=sys.stderr)
            return 2
        changed.set()  # the first run, at start
        while True:
            await changed.wait()
            changed.clear()
            generation += 1
            if run_task is not None and not run_task.done():
                await client.cancel()
                await asyncio.gather(run_task, return_exceptions=True)
            run_task = asyncio.create_task(run_once(generation))
    finally:
        watcher.stop()
        if run_task is not None:
            run_task.cancel()
            await asyncio.gather(run_task, return_exceptions=True)
