"""`compile-playground watch`: one warm worker, a run at start and after every save.

The newest content always wins (the engine's live-run loop, `playground.engine.live`, as in the
app): a save during a run cancels it, and a report whose content is older than a save seen
since is never printed after a newer one. A save of a module the snippet imports from its
folder reruns it too. Signals and the client's close are the caller's
(`playground.cli.main.guarded`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import sys
from pathlib import Path
from typing import Any

from playground.cli.flags import overrides_of, passes_of, program_of, run_flags_of
from playground.cli.textreport import render, render_findings
from playground.engine.client import RunCancelled, WorkerClient, WorkerUnavailable
from playground.engine.events import DiagnosticsEvent, FindingsEvent, RestartEvent, RunEvent
from playground.engine.findings import superseded
from playground.engine.live import LiveRuns
from playground.engine.report import Report
from playground.engine.run_request import RunRequest
from playground.engine.session import SessionWriter, presenting_folder, source_that_ran
from playground.engine.snippet import prepare_run, read_regular_bytes
from playground.engine.watch import SnippetWatcher


def _print_line(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def _staged(stage: str, report: Report) -> dict[str, Any]:
    """The contract's line: stage and content_sha256 first, then the report keys."""
    return {"stage": stage, "content_sha256": report.content_sha256, **report.to_dict()} | {"stage": stage}


class _Watch:
    """One watch session: the warm client, the file watcher, and the live runs, which silence
    a run once a newer save exists."""

    def __init__(self, args: argparse.Namespace, client: WorkerClient) -> None:
        loop = asyncio.get_running_loop()
        self.args = args
        self.client = client
        self.changed = asyncio.Event()
        self.runs = LiveRuns()
        self.overrides = overrides_of(args)

        def on_change() -> None:
            loop.call_soon_threadsafe(self.changed.set)

        self.watcher = SnippetWatcher(args.snippet, on_change, debounce_s=args.debounce, poll=args.poll)
        self.run_task: asyncio.Task[None] | None = None
        #: The workshop session each complete run is published to (--present), if any.
        self.present: SessionWriter | None = None
        #: The findings printed for the current run (text mode says where its report differs).
        self.findings: Report | None = None

    def show(self, stage: str, report: Report) -> None:
        if stage == "complete":
            self.publish(report)
        if self.args.json_lines:
            _print_line(_staged(stage, report))
        elif stage == "complete":
            print(render(report), flush=True)
            differs = superseded(self.findings, report) if self.findings is not None else ""
            if differs:
                print(f"note: {differs}", flush=True)
            print("-" * 72, flush=True)
        elif stage == "findings":
            self.findings = report
            print(render_findings(report), flush=True)

    def publish(self, report: Report) -> None:
        """Hand a complete run to followers; a failed write stops presenting, not watching."""
        if self.present is None:
            return
        path = Path(self.args.snippet)
        try:
            source = source_that_ran(path, report.content_sha256, fallback=_text(path))
            self.present.publish(report, source, report.settings, path.name)
        except OSError as exc:
            print(f"compile-playground: stopped presenting: {exc}", file=sys.stderr)
            self.present = None

    def _on_event(self, gen: int, event: RunEvent) -> None:
        if not self.runs.is_current(gen):
            return  # a newer save exists: this run's lines are stale
        if isinstance(event, DiagnosticsEvent) and event.report.stage == "diagnostics":
            self.show("diagnostics", event.report)  # the stream's contract: once the calls ran
        elif isinstance(event, FindingsEvent):
            # An extension: Dynamo's findings while a slow backend compiles (docs/report.md).
            self.show("findings", event.report)
        elif isinstance(event, RestartEvent) and not self.args.json_lines:
            print(f"worker restarted: {event.reason}", file=sys.stderr)

    async def run_once(self, gen: int) -> None:
        args = self.args
        self.findings = None
        # Read once per run, settings and all: a save may change SETTINGS.
        prepared = prepare_run(args.snippet, self.overrides)
        if prepared.error is not None:
            self.show("complete", prepared.refused_report())
            return
        try:
            text = prepared.source.text if prepared.source else None
            program = program_of(args, text, args.program_args, typed=str(args.snippet))
            flags = dataclasses.replace(run_flags_of(args), early_findings=True)
            request = RunRequest(prepared, flags, passes_of(args), program=program)
            result = await self.client.run(request, lambda event: self._on_event(gen, event))
        except RunCancelled:
            return
        if not self.runs.is_current(gen):
            return
        report = result.report
        self.watcher.watch_modules(self.runs.follow(report))
        self.show("complete", report)

    async def rerun(self) -> None:
        """Cancel the run in flight, if any, and start one for the newest content."""
        self.runs.supersede()
        if self.run_task is not None and not self.run_task.done():
            await self.client.cancel()
            await asyncio.gather(self.run_task, return_exceptions=True)
        self.run_task = asyncio.create_task(self.run_once(self.runs.generation))

    async def stop(self) -> None:
        self.watcher.stop()
        if self.run_task is not None:
            self.run_task.cancel()
            await asyncio.gather(self.run_task, return_exceptions=True)


def _text(path: Path) -> str:
    try:
        return read_regular_bytes(path).decode("utf-8-sig", errors="replace")
    except OSError:
        return ""


async def watch(args: argparse.Namespace, client: WorkerClient) -> int:
    """Watch until cancelled; returns 2 when the worker cannot start at all."""
    session = _Watch(args, client)
    if args.present:
        try:
            # Under torchrun, each rank presents to a folder of its own in it (rank_folders.py).
            session.present = SessionWriter(presenting_folder(args.present), snippet_name=Path(args.snippet).name)
        except OSError as exc:
            print(f"compile-playground: --present: {exc}", file=sys.stderr)
            return 2
    session.watcher.start()
    if not args.json_lines:
        print(f"watching {args.snippet} ({session.watcher.mode}); Ctrl-C to stop", file=sys.stderr)
    try:
        try:
            await client.start()
        except WorkerUnavailable as exc:
            print(f"compile-playground: {exc}", file=sys.stderr)
            return 2
        if session.present is not None:
            with contextlib.suppress(OSError):
                session.present.update(hello=client.hello)
        session.changed.set()  # the first run, at start
        while True:
            await session.changed.wait()
            session.changed.clear()
            await session.rerun()
    finally:
        await session.stop()
        if session.present is not None:
            with contextlib.suppress(OSError):
                session.present.close()
