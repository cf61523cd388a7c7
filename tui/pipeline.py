"""The run pipeline: file changes and key presses become runs on the engine, and the engine's
events come back as messages that update one frozen View.

Runs are numbered (generations). Only the newest generation's messages change what is shown,
so a result made stale by a newer save or setting is never presented as current; the run
worker is exclusive, and a superseded run is cancelled on the engine as well.

Every complete run is kept in a `History` with the text that ran, so the screen can say what
changed since the same settings last ran. A run asked for with `trace=True` (key t) also
writes torch's structured trace when it finishes.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import work
from textual.message import Message
from textual.worker import Worker, WorkerState

from playground.engine.history import History
from playground.engine.report import Report
from playground.engine.settings import Settings, resolve_settings
from playground.engine.snippet import literal_settings, read_regular_bytes
from playground.engine.textsafe import visible, visible_data
from tui.compare import Comparison, since_previous
from tui.engine import Engine, is_run_cancelled
from tui.exporting import TRACE_DIR, has_trace, save_trace, shown, without_trace
from tui.findings import missing_backend, refused_break
from tui.messages import (
    DiagnosticsReady,
    Progress,
    RunFailed,
    RunFinished,
    RunStarted,
    SnippetChanged,
    WorkerReady,
    WorkerRestarted,
)
from tui.state import RunState, View

if TYPE_CHECKING:
    from textual.app import App

    from tui.screens.main import MainScreen

    class _Base(App[None]):
        main: MainScreen
else:
    _Base = object


@dataclass(frozen=True)
class RunRequest:
    generation: int
    path: Path
    settings: Settings
    trace: bool = False


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# Text from the snippet or from torch is untrusted input to the terminal (an ESC in it is a
# command). It enters the UI only here: engine events (`run_snippet`'s on_event), the finished
# report (`intake_report`), the file's text (`source_text`), worker failures and the file name
# (`publish`); each escapes control characters once, so every pane and bar reads safe text and
# a new pane cannot forget to. Notifications escape in `PlaygroundApp.notify`.
def intake_report(raw: dict[str, Any]) -> Report:
    """The engine's report dict as the panes read it: control characters made visible."""
    return Report.from_dict(visible_data(raw))


def source_text(data: bytes) -> str:
    """The snippet's bytes as the Source pane shows them: a UTF-8 BOM dropped (Notepad writes
    one; Python ignores it), lines split where Python splits them (a lone CR too, so the line
    numbers match torch's), control characters made visible."""
    text = data.decode("utf-8-sig", errors="replace")
    return visible(text.replace("\r\n", "\n").replace("\r", "\n"))


def event_message(generation: int, event: dict[str, Any]) -> Message | None:
    """The typed message for one engine event; None for kinds this UI does not show."""
    kind = event.get("event")
    if kind == "progress":
        return Progress(
            generation,
            str(event.get("phase", "")),
            event.get("call"),
            event.get("calls"),
            str(event.get("message", "")),
        )
    if kind == "diagnostics" and isinstance(event.get("report"), dict):
        return DiagnosticsReady(generation, event["report"])
    if kind == "restarted":
        return WorkerRestarted(generation, str(event.get("reason", "")))
    return None


def error_report(kind: str, type_: str, message: str, settings: Settings) -> Report:
    """A report holding only an error, for failures that produced no report at all."""
    return intake_report(
        {
            "settings": settings.to_dict(),
            "error": {"kind": kind, "type": type_, "message": message},
        }
    )


def short_error(report: Report) -> str:
    """The error for the summary bar: who failed, where, and the exception type; the full
    message is in the source and output panes."""
    error = report.error
    if error is None:
        return ""
    if missing_backend(report):
        return missing_backend(report)
    where = f" at line {error.line}" if error.line else ""
    return f"{error.kind} error{where}: {error.type or 'see Output'}"


def _read_outcome(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


class RunPipeline(_Base):
    """Mixed into the App: owns the engine, the watcher and the run state.

    Handlers go by their conventional names (`on_run_finished`): `@on` is only collected
    from classes built by Textual's metaclass, which a mixin is not.
    """

    def init_pipeline(
        self,
        snippet: Path,
        engine: Engine,
        settings: Settings,
        *,
        watch: bool,
        clock: Callable[[], float] = time.monotonic,
        pinned: dict[str, Any] | None = None,
    ) -> None:
        self.snippet = snippet
        #: Settings given on the command line: they outlast a switch to another snippet.
        #: Only the keys given, already typed: {"dynamic": None} is an explicit --dynamic auto.
        self._pinned = dict(pinned or {})
        self.engine = engine
        self.settings = settings
        self.hello: dict[str, Any] | None = None
        self._watch = watch
        self._watcher: Any = None
        self._clock = clock
        self._generation = 0
        self._requested: tuple[str, Settings, str] | None = None
        #: The modules the last good run imported from outside Python and installed packages (its
        #: helpers): an edit to one of them reruns the snippet, whose own bytes did not change.
        self._local_modules: tuple[str, ...] = ()
        self._worker_generation: dict[Worker[Any], int] = {}
        self._engine_lock = asyncio.Lock()
        self._source = ""
        self._source_sha = ""
        self._file_settings = literal_settings(self._read_text() or "")
        self._good: Report | None = None
        self._good_generation = -1
        self._attempt: Report | None = None
        self._run_state = RunState("starting")
        self._started_at: float | None = None
        self._engine_task: asyncio.Future[Any] | None = None
        self._quitting = False
        self._engine_closed = False
        self._engine_failed = False
        self.history = History()
        self._since: Comparison | None = None
        self._trace_generation: int | None = None
        #: Set when the user first opens the Code pane: from then on every run asks the worker
        #: for Dynamo's code (depyf costs time, so runs do not before).
        self.want_dynamo_code = False

    # The view.
    def publish(self) -> None:
        """Build the frozen View from the current state and hand it to the main screen."""
        good = self._good
        stale = good is not None and (
            self._good_generation != self._generation
            or (bool(good.content_sha256) and good.content_sha256 != self._source_sha)
        )
        view = View(
            snippet_name=visible(self.snippet.name),
            source=self._source,
            settings=self.settings,
            hello=self.hello,
            run=self._run_state,
            report=good,
            attempt=self._attempt,
            stale=stale,
            since=self._since,
        )
        self.main.view = view

    def _set_run(self, state: RunState) -> None:
        self._run_state = state
        self.publish()

    # Lifecycle.
    def on_mount(self) -> None:
        self._read_source()
        self.publish()
        notice = getattr(self, "notice", "")
        if notice:
            self.notify(notice, timeout=8)
        if self._watch:
            self.start_watching()
        self.start_engine()

    async def on_unmount(self) -> None:
        self.stop_watching()
        await self.shutdown_engine()

    def start_watching(self) -> None:
        try:
            from playground.engine.watch import SnippetWatcher
        except ImportError:
            self.notify("file watching unavailable: press r to rerun", severity="warning")
            return
        # post_message is thread-safe, and unlike call_from_thread it never blocks the
        # watcher thread on an app that is shutting down.
        self._watcher = SnippetWatcher(self.snippet, lambda: self.post_message(SnippetChanged()))
        self._watcher.start()

    def stop_watching(self) -> None:
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None

    def open_snippet(self, path: Path) -> None:
        """Switch to another snippet file: its SETTINGS apply, then the command line's flags
        (as at start); the device stays."""
        self.stop_watching()
        self.snippet = path
        text = self._read_text() or ""
        self._file_settings = literal_settings(text)
        base = Settings(device=self.settings.device, cold=self.settings.cold)
        self.settings = resolve_settings(text, self._pinned, base=base).settings
        self._good, self._attempt, self._good_generation = None, None, -1
        # Before/after compares versions of one file: another snippet starts its own history.
        self.history, self._since = History(), None
        if self._watch:
            self.start_watching()
        self.request_run("opened", force=True)

    @work(group="engine", exit_on_error=False)
    async def start_engine(self) -> None:
        hello = await self.engine.start()
        self.post_message(WorkerReady(dict(hello or {})))

    # Requests.
    def _read_text(self) -> str | None:
        try:
            # utf-8-sig: a BOM would hide SETTINGS from the parser, as it would from compile().
            return read_regular_bytes(self.snippet).decode("utf-8-sig", errors="replace")
        except OSError:
            return None

    def _read_source(self) -> bool:
        """Read the file as it is now; False only when it is missing. A directory, FIFO or
        unreadable file still goes to the engine, whose report names the problem."""
        try:
            data = read_regular_bytes(self.snippet)
        except FileNotFoundError:
            return False
        except OSError:
            data = b""
            self._source, self._source_sha = "", ""
            return True
        self._source = source_text(data)
        self._source_sha = sha256(data)
        return True

    def _next_generation(self) -> int:
        """Make whatever is in flight stale; a trace asked for and not yet written is lost."""
        self._generation += 1
        if self._trace_generation is not None:
            self._trace_generation = None
            self.notify("no trace written: a newer change replaced the trace run (press t again)", severity="warning")
        return self._generation

    def request_run(self, reason: str, *, force: bool = True, trace: bool = False) -> None:
        """Run the file as it is now under the current settings; the newest request wins.

        `trace` asks the engine for torch's structured trace and writes it when the run ends."""
        if not self._read_source():
            # Deleted (or mid-rename): whatever reappears must run, even the same bytes.
            self._next_generation()
            self._requested = None
            self._set_run(RunState("missing", message=f"{visible(self.snippet.name)} not found"))
            return
        self._apply_file_settings()
        key = (self._source_sha, self.settings, self._modules_digest())
        if not force and key == self._requested:
            return  # an editor's second write of the same bytes: nothing new to learn
        self._requested = key
        self._next_generation()
        if trace:
            self._trace_generation = self._generation
        request = RunRequest(self._generation, self.snippet, self.settings, trace)
        if self.hello is None:
            # The worker is still starting; WorkerReady runs the newest request. If it failed
            # to start, asking again (r, a save) is how the user retries.
            if self._engine_failed:
                self._engine_failed = False
                self.start_engine()
            self._set_run(RunState("starting"))
            return
        self._set_run(RunState("queued", message=reason))
        worker = self.run_snippet(request)
        self._worker_generation[worker] = request.generation

    def _apply_file_settings(self) -> None:
        """A SETTINGS edit in the file is deliberate: it overrides the keys it names."""
        found = literal_settings(self._source)
        if found != self._file_settings:
            self._file_settings = found
            self.settings = resolve_settings(self._source, None, base=self.settings).settings

    @work(exclusive=True, group="run", exit_on_error=False)
    async def run_snippet(self, request: RunRequest) -> None:
        """Run one request on the engine; posts messages, never touches widgets."""
        async with self._engine_lock:
            if request.generation != self._generation:
                return
            self.post_message(RunStarted(request.generation, request.settings))

            def on_event(event: dict[str, Any]) -> None:
                message = event_message(request.generation, visible_data(event))
                if message is not None:
                    self.post_message(message)

            # Only a trace run passes an option, so engines without options still run the rest.
            options = {"trace": True} if request.trace else {}
            if self.want_dynamo_code:
                options["dynamo_code"] = True  # issue 12
            task = asyncio.ensure_future(self.engine.run(str(request.path), request.settings, on_event, **options))
            # A superseded run may be cancelled twice over and never awaited to the end; its
            # outcome (often RunCancelled) is read here so asyncio never reports it as lost.
            task.add_done_callback(_read_outcome)
            self._engine_task = task
            try:
                raw = await asyncio.shield(task)
            except asyncio.CancelledError:
                await self._stop_engine_run(task)
                raise
            except Exception as exc:
                if is_run_cancelled(exc):
                    return
                raise
            finally:
                self._engine_task = None
            self.post_message(RunFinished(request.generation, raw))

    async def _stop_engine_run(self, task: asyncio.Future[Any]) -> None:
        """Superseded by a newer request: cancel through the engine, so the worker process
        stops compiling this run too; cancelling our await alone would leave it busy."""
        if self._quitting:
            task.cancel()
        while not task.done():
            # Repeated: a cancel that lands before the run has begun is a no-op.
            await self.engine.cancel()
            await asyncio.wait({task}, timeout=0.05)
        with contextlib.suppress(BaseException):
            task.result()

    def hold_runs(self, why: str) -> asyncio.Lock:
        """Lend the engine to something else (the settings matrix): the run in flight is
        cancelled and made stale, and normal runs wait on the returned lock, which the
        borrower holds while it uses the engine. Afterwards, `request_run` restores the view."""
        self._next_generation()
        self._requested = None  # the rerun afterwards must run, even unchanged bytes
        self.workers.cancel_group(self, "run")
        self._set_run(RunState("paused", message=why))
        return self._engine_lock

    async def shutdown_engine(self) -> None:
        """Stop any run at once and close the engine (quit, or the app going away).

        The engine is closed before the run is cancelled: a closed client kills its busy
        worker and starts no other, while a run cancelled on an open client replaces its
        worker (torch imported again: seconds) and quitting would wait for that."""
        self._quitting = True
        task = self._engine_task
        if not self._engine_closed:
            self._engine_closed = True
            await self.engine.close()
        if task is not None and not task.done():
            task.cancel()
            with contextlib.suppress(BaseException):
                await task

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """Every worker failure lands here, and becomes an error the user can read."""
        worker = event.worker
        if event.state not in (WorkerState.ERROR, WorkerState.SUCCESS, WorkerState.CANCELLED):
            return
        generation = self._worker_generation.pop(worker, None)
        if event.state != WorkerState.ERROR:
            return
        error = worker.error
        message = visible(f"{type(error).__name__}: {error}") if error else "unknown failure"
        if worker.group == "export":
            self.notify(f"export failed: {message}", severity="error", timeout=10)
        elif worker.group == "engine":
            self._engine_failed = True
            self._attempt = error_report("worker", "StartFailed", message, self.settings)
            self._set_run(RunState("error", message=f"could not start the torch worker: {message} (r retries)"))
        elif generation is not None:
            self.post_message(RunFailed(generation, message))

    # The engine's messages.
    def _current(self, generation: int) -> bool:
        # Quitting: what a dying run still reports must not replace "quitting…".
        return generation == self._generation and not self._quitting

    def on_worker_ready(self, message: WorkerReady) -> None:
        self.hello = message.hello
        self._requested = None
        self.request_run("start")

    def on_snippet_changed(self, message: SnippetChanged) -> None:
        self.request_run("saved", force=False)

    def on_run_started(self, message: RunStarted) -> None:
        if self._current(message.generation):
            self._started_at = self._clock()
            self._set_run(RunState("running", phase="loading"))

    def on_progress(self, message: Progress) -> None:
        if self._current(message.generation):
            state = RunState("running", message.phase, message.call, message.calls, message=message.message)
            self._set_run(state)

    def on_diagnostics_ready(self, message: DiagnosticsReady) -> None:
        if not self._current(message.generation):
            return
        report = intake_report(message.report)
        self._attempt = report
        if report.error is None or refused_break(report) is not None:
            self._good, self._good_generation = report, message.generation
        self.publish()

    def _modules_digest(self) -> str:
        digest = hashlib.sha256()
        for name in self._local_modules:
            try:
                digest.update(read_regular_bytes(name))
            except OSError:
                digest.update(b"\0missing")
        return digest.hexdigest()

    def _follow_modules(self, report: dict[str, Any]) -> None:
        """Watch the helpers the run imported; after a failed run, every .py beside the
        snippet (a helper with a syntax error never shows up as imported)."""
        ok = not report.get("error")
        modules = report.get("local_modules") if ok else None
        self._local_modules = tuple(modules or ())
        if not ok:
            self._requested = None  # whatever changes next must run
        if self._watcher is not None:
            self._watcher.watch_modules(modules)

    def on_run_finished(self, message: RunFinished) -> None:
        if not self._current(message.generation):
            return  # a newer save or setting made it stale: never shown as current
        self._follow_modules(message.report)
        if message.generation == self._trace_generation:
            self._trace_generation = None
            self.write_trace(message.report)
        report = intake_report(without_trace(message.report))
        self._attempt = report
        self._sync_source(report)
        self._record(report)
        # A break refused under fullgraph=True is this run's finding, not a failure: shown as
        # the current result (never STALE), the refused line marked as a break.
        if report.error is None or refused_break(report) is not None:
            self._good, self._good_generation = report, message.generation
            duration = report.duration_s or report.wall_s
            if duration is None and self._started_at is not None:
                duration = self._clock() - self._started_at
            self._set_run(RunState("done", duration_s=duration))
        else:
            self._set_run(RunState("error", message=short_error(report)))

    def on_run_failed(self, message: RunFailed) -> None:
        if not self._current(message.generation):
            return
        if message.generation == self._trace_generation:
            self._trace_generation = None
            self.notify("no trace written: the engine failed (see the summary)", severity="error")
        self._attempt = error_report("worker", "EngineError", message.message, self.settings)
        self._set_run(RunState("error", message=f"worker error: {message.message}"))

    def on_worker_restarted(self, message: WorkerRestarted) -> None:
        reason = message.reason or "it stopped answering"
        self.notify(f"torch worker restarted: {reason}", severity="warning", timeout=6)

    def _record(self, report: Report) -> None:
        """Keep a complete run with the text that ran (the hash says which) for before/after;
        a run whose text is no longer known is not kept rather than paired with the wrong text."""
        if report.stage != "complete" or (report.content_sha256 and report.content_sha256 != self._source_sha):
            self._since = None
            return
        entry = self.history.add(report, self._source)
        self._since = since_previous(self.history, entry)

    @work(group="export", exit_on_error=False)
    async def write_trace(self, report: dict[str, Any]) -> None:
        """Write a trace run's structured trace off the UI thread, then say how to render it."""
        if not has_trace(report):
            self.notify("no trace came back from this run: the worker's torch wrote none", severity="warning")
            return
        path, command = await asyncio.to_thread(save_trace, report, Path.cwd() / TRACE_DIR)
        self.notify(f"trace written: {shown(path)}\nrender it: {command}", title="trace", timeout=20)

    def _sync_source(self, report: Report) -> None:
        """Show the text that actually ran, if the file changed between our read and the run's."""
        if not report.content_sha256 or report.content_sha256 == self._source_sha:
            return
        try:
            data = read_regular_bytes(self.snippet)
        except OSError:
            return
        if sha256(data) == report.content_sha256:
            self._source = source_text(data)
            self._source_sha = report.content_sha256


__all__ = ["RunPipeline", "RunRequest", "View", "event_message"]
