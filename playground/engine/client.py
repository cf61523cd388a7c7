"""The client side of the warm worker: the run protocol. Torch-free.

Shared by the CLI (`check`, `watch`, `matrix`) and the Textual app, which injects it as its
engine. Everything is asyncio so the app's event loop never blocks on the worker. The process
and its pipes are playground/engine/channel.py; the reports of runs that ended without one are
playground/engine/failures.py. This module turns the worker's JSON into typed values, at the
seam: a `RunResult` at the end and typed events (playground/engine/events.py) on the way.

The worker (playground/worker/main.py) is a template process that forks one child per run. A cancel
or a timeout kills that child and the template stays; only the template's own death (or a
template that stops answering) brings a restart, which pays the torch import again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import secrets
import sys
import time
from typing import Any

from playground.engine.channel import HELLO_TIMEOUT_S, RUN_KEY, WorkerChannel
from playground.engine.errors import RunCancelled, WorkerUnavailable
from playground.engine.events import (
    DiagnosticsEvent,
    EventHandler,
    FindingsEvent,
    FixEvent,
    Progress,
    ProgressEvent,
    RestartEvent,
    RunEnded,
    RunResult,
    Trace,
)
from playground.engine.failures import RunFailures, failure_report
from playground.engine.hello import WorkerHello
from playground.engine.report import Fix, FixAdvice, Report
from playground.engine.report.fixes import ordered
from playground.engine.run_request import RunRequest

#: Default run timeout: a snippet that loops forever is killed after this many seconds.
DEFAULT_TIMEOUT_S = 120.0
#: A program's run when no timeout was given (the user's whole script: `python PROG` has none);
#: a third of it bounds the program itself (worker/run/programs/stops.program_seconds), so a
#: script of a minute or two plain is not stopped on a loaded machine.
PROGRAM_TIMEOUT_S = 600.0

__all__ = ["DEFAULT_TIMEOUT_S", "PROGRAM_TIMEOUT_S", "RunCancelled", "WorkerClient", "WorkerUnavailable"]


def _valid_timeout(value: float) -> float:
    if not isinstance(value, (int, float)) or value != value or value <= 0 or value == float("inf"):
        raise ValueError(f"a run timeout must be a positive number of seconds, not {value!r}")
    return float(value)


def run_timeout(request: RunRequest, client_timeout_s: float | None) -> float:
    """The timeout the worker enforces on `request`: its own, else the client's, else the
    default for its kind (a program's is longer: a whole script)."""
    if request.flags.timeout_s is not None:
        return _valid_timeout(request.flags.timeout_s)
    if client_timeout_s is not None:
        return client_timeout_s
    return PROGRAM_TIMEOUT_S if request.program is not None else DEFAULT_TIMEOUT_S


class WorkerClient:
    """One warm torch worker (a template that forks a child per run) and the runs sent to it,
    one at a time."""

    def __init__(self, *, timeout_s: float | None = None, python: str = sys.executable) -> None:
        #: Every run's timeout; None: DEFAULT_TIMEOUT_S, a program's PROGRAM_TIMEOUT_S.
        self.timeout_s = _valid_timeout(timeout_s) if timeout_s is not None else None
        self.channel = WorkerChannel(python)
        self._pending_restart: str = ""
        self._run_lock = asyncio.Lock()
        self._start_lock = asyncio.Lock()
        #: One count for runs and cancels: every run gets the next number when submitted, and
        #: that number is its id on the wire. cancel() cancels every run numbered up to
        #: `_cancel_upto` (one still waiting for the lock included) and wakes the one in flight.
        self._submitted = 0
        self._cancel_upto = 0
        self._cancel_event = asyncio.Event()
        self._running = False
        self._closed = False

    # --- lifecycle ---------------------------------------------------------------------------

    @property
    def hello(self) -> WorkerHello | None:
        return self.channel.hello

    @property
    def alive(self) -> bool:
        return self.channel.alive

    async def start(self) -> WorkerHello:
        """Spawn the worker if needed and wait for its hello (torch imported and warmed)."""
        async with self._start_lock:
            if self.alive and self.hello is not None:
                return self.hello
            if self._closed:
                raise WorkerUnavailable("the engine is closed")
            return await self.channel.spawn()

    async def close(self) -> None:
        """Shut the worker down: a run in flight is cancelled (its child killed at once), the
        template kills what the runs left and exits; its process group is killed after that."""
        self._closed = True
        self._cancel_upto = self._submitted
        self._cancel_event.set()
        await self.channel.shutdown()

    def kill_now(self) -> None:
        """Kill the worker at once, from any thread, the loop stuck or gone (see
        `WorkerChannel.kill_now`); the client is closed."""
        self._closed = True
        self.channel.kill_now()

    async def _restart(self, reason: str, emit: EventHandler) -> None:
        await self.channel.kill()
        if self._closed:
            return  # closing: a dying run must not bring a new worker up
        self._pending_restart = reason
        emit(RestartEvent(reason))
        await self.start()

    async def _ensure_started(self, emit: EventHandler) -> None:
        if self.alive:
            return
        if self._pending_restart or self.hello is not None:
            await self._restart(self._pending_restart or "the previous worker had exited", emit)
        else:
            await self.start()

    # --- runs ----------------------------------------------------------------------------------

    async def run(self, request: RunRequest, on_event: EventHandler | None = None) -> RunResult:
        """Run `request` once; always returns a result (errors are data in
        `result.report.error`), or raises RunCancelled. The snippet travels as the request holds
        it: the file is not read again, nor its SETTINGS parsed."""
        emit = on_event or (lambda event: None)
        timeout = run_timeout(request, self.timeout_s)
        self._submitted += 1
        number = self._submitted
        async with self._run_lock:
            if self._cancel_upto >= number or self._closed:
                raise RunCancelled()
            self._cancel_event.clear()
            self._running = True
            try:
                return await self._run_locked(number, request, timeout, emit)
            except asyncio.CancelledError:
                # The caller's task was cancelled mid-run: have the template kill the child. Its
                # late messages carry its id and are skipped by the next run.
                self.channel.send_nowait({"op": "cancel", "id": number})
                raise
            finally:
                self._running = False

    async def _run_locked(self, number: int, request: RunRequest, timeout: float, emit: EventHandler) -> RunResult:
        started = time.perf_counter()
        version = self.hello.torch_version if self.hello is not None else ""
        prepared = request.prepared
        # A file that cannot run, or a bad SETTINGS, is named, never silently ignored (check and
        # watch refuse a bad SETTINGS before a run; the app, which reruns on every save, here).
        if not request.sendable:
            report = failure_report(prepared.path, prepared.settings, request.refusal, version)
            return RunResult(self._stamp(report, prepared.sha256, started))
        assert prepared.source is not None
        await self._ensure_started(emit)
        stderr_mark = self.channel.stderr.count
        emit(ProgressEvent(step="queued", message="sent to the worker"))
        key = secrets.token_hex(16)
        # The worker is told the timeout it enforces: the request's, else this client's.
        sent = dataclasses.replace(request, flags=dataclasses.replace(request.flags, timeout_s=timeout))
        # sent_mono: the save's waterfall starts here (one CLOCK_MONOTONIC with the worker's).
        message = {"op": "run", "id": number, **sent.to_dict(), RUN_KEY: key, "sent_mono": time.monotonic()}
        await self.channel.send(message)
        failures = RunFailures(
            self.channel, prepared.source.path, prepared.settings, stderr_mark, number, program=request.program
        )
        follow = _Follow(number, key, prepared.source.sha256, started, tries_fixes=bool(request.passes.fixes))
        return await self._follow(follow, emit, failures, timeout)

    async def _follow(self, follow: _Follow, emit: EventHandler, failures: RunFailures, timeout: float) -> RunResult:
        """The run's messages until its report, or until it ends without one."""
        run_id, sha, started = follow.run_id, follow.sha, follow.started
        # The template enforces `timeout` on the child; this only catches a template that stopped
        # answering (it may first spend a while starting Inductor, once).
        backstop = timeout + HELLO_TIMEOUT_S
        deadline = time.monotonic() + backstop
        while True:
            kind, message = await self.channel.next(max(deadline - time.monotonic(), 0.0), self._cancel_event)
            if kind == "wake":
                if self._cancel_upto >= run_id or self._closed:
                    self.channel.send_nowait({"op": "cancel", "id": run_id})
                    raise RunCancelled()
                self._cancel_event.clear()
                continue
            if kind == "eof":
                report, reason = await failures.template_died()
                if follow.held is not None:
                    # The run's own report came: it stays, with the fixes that came before the end.
                    kept = follow.with_fixes()
                    report = dataclasses.replace(kept, notes=(*kept.notes, f"fixes not tried to the end: {reason}"))
                return RunResult(await self._lost(report, reason, sha, started))
            if kind == "timeout":
                report, reason = await failures.template_stuck(timeout)
                return RunResult(await self._lost(report, reason, sha, started))
            assert message is not None
            if message.get("event") == "hello":
                self.channel.greeted(message)  # the worker replaced itself (a warm-up it had to undo)
                continue
            if message.get("id") != run_id:
                continue  # a late message of a cancelled run
            if message.get(RUN_KEY) != follow.key:
                # Not the worker's: a line the snippet (or something it started) wrote on the
                # descriptor it inherited. Never believed, and the report says it was there.
                follow.forged += 1
                continue
            deadline = time.monotonic() + backstop
            event = message.get("event")
            progress = Progress.from_dict(message)
            if progress is not None:
                failures.progressed(progress)
                emit(progress.event())
            elif event == "diagnostics":
                early = follow.note(self._stamp(Report.from_dict(message["report"]), sha, started))
                failures.diagnosed(early)
                emit(DiagnosticsEvent(early))
            elif (found := FindingsEvent.from_dict(message)) is not None:
                # The findings lane's: Dynamo's findings while the backend compiles.
                stamped = follow.note(self._stamp(found.report, sha, started))
                emit(dataclasses.replace(found, report=stamped, run_id=None))
            elif event == "report":
                report = follow.note(self._stamp(Report.from_dict(message["report"]), sha, started))
                if not follow.tries_fixes:
                    return RunResult(report, Trace.from_dict(message.get("trace")))
                follow.held = report  # the variants follow; the run ends with its "ended"
                emit(FixEvent(report=report))
            elif event == "fix":
                fix = Fix.from_dict(message.get("fix"))
                follow.streamed.append(fix)
                emit(FixEvent(fix=fix))
            elif event == "fixes":
                follow.fixes = message
            elif (ended := RunEnded.from_dict(message)) is not None:
                if follow.held is not None:
                    return RunResult(self._stamp(follow.with_fixes(), sha, started))
                report = await failures.child_ended(ended, timeout)
                return RunResult(follow.note(self._stamp(report, sha, started)))

    async def _lost(self, report: Report, reason: str, sha: str, started: float) -> Report:
        """The template died or hung: its report stamped, the template killed, and the next run
        told to start a fresh one (none is started now for a run that may never come)."""
        stamped = self._stamp(report, sha, started)
        await self.channel.kill()
        self._pending_restart = reason
        return stamped

    def _stamp(self, report: Report, sha: str | None, started: float) -> Report:
        """The client's part of every report: the content's hash, the wall time, and whether
        this run paid for a restarted worker."""
        stamp: dict[str, Any] = {"wall_s": round(time.perf_counter() - started, 4)}
        if sha is not None:
            stamp["content_sha256"] = sha
        if self._pending_restart and report.stage == "complete" and self.alive:
            stamp.update(worker_restarted=True, worker_restart_reason=self._pending_restart)
            self._pending_restart = ""
        return dataclasses.replace(report, **stamp)

    async def cancel(self) -> None:
        """Cancel the run in flight and every run submitted before now: the template kills the
        run's child at once. Returns when the run in flight has let go of the worker."""
        self._cancel_upto = self._submitted
        self._cancel_event.set()
        if self._running:
            async with self._run_lock:
                pass


@dataclasses.dataclass
class _Follow:
    """One run as the client follows it: its id, its key, and the lines that claimed to be
    about it without the key."""

    run_id: int
    key: str
    sha: str
    started: float
    forged: int = 0
    #: The run tries fixes: its report is held until the variants have ended.
    tries_fixes: bool = False
    held: Report | None = None
    fixes: dict[str, Any] | None = None
    #: Each remedy's result as it came (kept when the worker ends before its final list).
    streamed: list[Fix] = dataclasses.field(default_factory=list)

    def with_fixes(self) -> Report:
        """The held report with the fixes the worker sent (none when it was cancelled first)."""
        assert self.held is not None
        found = self.fixes or {}
        fixes = tuple(Fix.from_dict(f) for f in found.get("fixes") or () if isinstance(f, dict))
        if self.fixes is None:
            fixes = ordered(self.streamed)
        advice = tuple(FixAdvice.from_dict(a) for a in found.get("fix_advice") or () if isinstance(a, dict))
        report = dataclasses.replace(self.held, fixes=fixes, fix_advice=advice)
        if self.fixes is None and (report.kind == "program" or report.world_size is not None):
            why = (
                "fixes were not tried: they are tried on a snippet in one process, not yet on a program or across ranks"
            )
            report = dataclasses.replace(report, notes=(*report.notes, why))
        return self.note(report)

    def note(self, report: Report) -> Report:
        if not self.forged:
            return report
        note = (
            f"{self.forged} line(s) on the worker's channel did not come from the worker and were "
            "ignored: the snippet, or something it started, wrote there"
        )
        return dataclasses.replace(report, notes=(*report.notes, note))
