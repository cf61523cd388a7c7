"""`compile-playground watch`: one warm worker, a run at start and after every save.

The newest content always wins: a save during a run cancels it, and a report whose content is
older than a save seen since is never printed after a newer one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from playground.client import RunCancelled, WorkerClient, WorkerUnavailable
from playground.report import Report
from playground.textreport import render
from playground.watch import SnippetWatcher


def _print_line(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps({k: v for k, v in obj.items() if k != "trace_lines"}) + "\n")
    sys.stdout.flush()


def _staged(stage: str, report: dict[str, Any]) -> dict[str, Any]:
    """The contract's line: stage and content_sha256 first, then the report keys."""
    return {"stage": stage, "content_sha256": report.get("content_sha256", ""), **report} | {"stage": stage}


async def watch(args: argparse.Namespace) -> int:
    from playground.cli import settings_for

    loop = asyncio.get_running_loop()
    main_task = asyncio.current_task()
    if main_task is not None:
        import signal

        loop.add_signal_handler(signal.SIGTERM, main_task.cancel)
    changed = asyncio.Event()
    generation = 0

    def on_change() -> None:
        loop.call_soon_threadsafe(changed.set)

    client = WorkerClient(timeout_s=args.timeout)
    watcher = SnippetWatcher(args.snippet, on_change, debounce_s=args.debounce, poll=args.poll)
    watcher.start()
    if not args.json_lines:
        print(f"watching {args.snippet} ({watcher.mode}); Ctrl-C to stop", file=sys.stderr)
    run_task: asyncio.Task[None] | None = None

    async def run_once(gen: int) -> None:
        settings = settings_for(args.snippet, args)

        def on_event(event: dict[str, Any]) -> None:
            if gen != generation:
                return  # a newer save exists: this run's lines are stale
            if event.get("event") == "diagnostics" and args.json_lines:
                _print_line(_staged("diagnostics", event["report"]))
            elif event.get("event") == "restarted" and not args.json_lines:
                print(f"worker restarted: {event.get('reason')}", file=sys.stderr)

        try:
            report = await client.run(
                args.snippet, settings, on_event, timing=args.timing, min_run_time=args.min_run_time
            )
        except RunCancelled:
            return
        if gen != generation:
            return
        if args.json_lines:
            _print_line(_staged("complete", report))
        else:
            print(render(Report.from_dict(report)), flush=True)
            print("-" * 72, flush=True)

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
    except (KeyboardInterrupt, asyncio.CancelledError):
        return 0
    finally:
        watcher.stop()
        if run_task is not None:
            run_task.cancel()
            await asyncio.gather(run_task, return_exceptions=True)
        await client.close()
