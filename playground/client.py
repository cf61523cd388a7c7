"""The client side of the warm worker: spawns it, sends runs, reads events. Torch-free.

Shared by the CLI (`check`, `watch`, `matrix`) and the Textual app, which injects it as its
engine. Everything is asyncio so the app's event loop never blocks on the worker.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from playground.report import blank_report
from playground.settings import Settings
from playground.snippet import SnippetError, read_snippet, snippet_line_in_stack

EventHandler = Callable[[dict[str, Any]], None]

#: Default run timeout: a snippet that loops forever is killed after this many seconds.
DEFAULT_TIMEOUT_S = 120.0
#: The worker is recycled once its resident memory passes this ceiling (MiB).
DEFAULT_RSS_LIMIT_MB = float(os.environ.get("COMPILE_PLAYGROUND_RSS_LIMIT_MB", "3072"))
HELLO_TIMEOUT_S = 180.0
#: How long a killed worker's process group may live on (a compiler finishing its output).
GROUP_GRACE_S = 3.0
_STREAM_LIMIT = 256 * 2**20


class RunCancelled(Exception):
    """The run was cancelled by `cancel()` (a newer save made it stale)."""


class WorkerUnavailable(Exception):
    """The worker could not be started at all (torch missing or broken)."""


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _project_root() -> str:
    return str(Path(__file__).resolve().parents[1])


def empty_report(path: str, settings: Settings, error: dict[str, Any], torch_version: str = "") -> dict[str, Any]:
    """A contract-shaped report for a run that never reached torch."""
    return blank_report(str(path), settings.to_dict(), error, torch_version)


class WorkerClient:
    """One warm torch worker process and the runs sent to it, one at a time."""

    def __init__(
        self,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        python: str = sys.executable,
        rss_limit_mb: float = DEFAULT_RSS_LIMIT_MB,
        cancel_grace_s: float = 1.5,
    ) -> None:
        self.timeout_s = timeout_s
        self.python = python
        self.rss_limit_mb = rss_limit_mb
        self.cancel_grace_s = cancel_grace_s
        self.hello: dict[str, Any] | None = None
        self.proc: asyncio.subprocess.Process | None = None
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=400)
        self.restarts = 0
        self._pending_restart: str = ""
        self._stderr_task: asyncio.Task[None] | None = None
        self._run_lock = asyncio.Lock()
        self._start_lock = asyncio.Lock()
        #: Runs are numbered as they are submitted; cancel() cancels every run submitted before
        #: it, including one still waiting for the lock.
        self._submitted = 0
        self._cancel_upto = 0
        self._running = False
        self._next_id = 0
        self._current = 0
        self._closed = False

    # --- lifecycle ---------------------------------------------------------------------------

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    async def start(self) -> dict[str, Any]:
        """Spawn the worker if needed and wait for its hello (torch imported)."""
        async with self._start_lock:
            if self.alive and self.hello is not None:
                return self.hello
            env = dict(os.environ)
            root = _project_root()
            env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
            env.setdefault("PYTHONUNBUFFERED", "1")
            # The worker speaks only over its pipes: never a network port.
            self.proc = await asyncio.create_subprocess_exec(
                self.python,
                "-m",
                "playground.worker",
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=env,
                start_new_session=True,  # its own process group: killing it kills what it spawned
                limit=_STREAM_LIMIT,
            )
            self.stderr_tail.clear()
            self._stderr_task = asyncio.create_task(self._drain_stderr(self.proc))
            try:
                message = await asyncio.wait_for(self._read_message(), HELLO_TIMEOUT_S)
            except (asyncio.TimeoutError, EOFError) as exc:
                tail = self.stderr_text()[-2000:]
                await self._kill()
                raise WorkerUnavailable(f"the torch worker did not start: {tail or exc!r}") from None
            if message.get("event") != "hello":
                await self._kill()
                raise WorkerUnavailable(f"unexpected first message from the worker: {message!r}")
            self.hello = message
            return message

    async def close(self, grace_s: float = 2.0) -> None:
        """Shut the worker down; a busy worker (a run in flight) is killed at once."""
        self._closed = True
        if self._running:
            self._cancel_upto = self._submitted
            grace_s = 0.0
        if self.proc is not None and self.proc.returncode is None and grace_s > 0:
            with contextlib.suppress(Exception):
                await self._send({"op": "shutdown"})
                self.proc.stdin.close()  # type: ignore[union-attr]
                await asyncio.wait_for(self.proc.wait(), grace_s)
        await self._kill()

    async def _kill(self) -> None:
        """Kill the worker, then what it left in its process group.

        The worker goes first and alone: a compiler it started (Inductor's g++) is given a
        moment to finish writing, because a half-written .so left in Inductor's on-disk cache
        fails every later compile that hits it ("file too short"). Whatever is still in the
        group after that (a snippet's runaway children) is killed."""
        proc = self.proc
        if proc is None:
            return
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(proc.wait(), 5.0)
        deadline = time.monotonic() + GROUP_GRACE_S
        while time.monotonic() < deadline and _group_alive(proc.pid):
            await asyncio.sleep(0.05)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        if self._stderr_task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._stderr_task, 1.0)
        self.hello = None

    async def restart(self, reason: str, on_event: EventHandler | None = None) -> dict[str, Any]:
        await self._kill()
        if self._closed:
            return {}  # closing: a dying run must not bring a new worker up
        self.restarts += 1
        self._pending_restart = reason
        if on_event is not None:
            on_event({"event": "restarted", "reason": reason})
        return await self.start()

    # --- I/O -----------------------------------------------------------------------------------

    async def _drain_stderr(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stderr is not None
        while True:
            line = await proc.stderr.readline()
            if not line:
                return
            self.stderr_tail.append(line.decode("utf-8", "replace"))

    def stderr_text(self) -> str:
        return "".join(self.stderr_tail)

    async def _send(self, message: dict[str, Any]) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        await self.proc.stdin.drain()

    async def _read_message(self) -> dict[str, Any]:
        assert self.proc is not None and self.proc.stdout is not None
        line = await self.proc.stdout.readline()
        if not line:
            raise EOFError("worker closed its channel")
        return json.loads(line)

    # --- runs ----------------------------------------------------------------------------------

    async def run(
        self,
        path: str | os.PathLike[str],
        settings: Settings,
        on_event: EventHandler | None = None,
        *,
        timing: bool = True,
        min_run_time: float = 0.2,
        trace: bool = False,
        timeout_s: float | None = None,
    ) -> dict[str, Any]:
        """Run the snippet at `path` once; always returns a contract report dict (errors are
        data in report["error"]), or raises RunCancelled."""
        emit = on_event or (lambda event: None)
        self._submitted += 1
        number = self._submitted
        async with self._run_lock:
            if self._cancel_upto >= number:
                raise RunCancelled()
            self._running = True
            self._current = number
            try:
                return await self._run_locked(path, settings, emit, timing, min_run_time, trace, timeout_s)
            except asyncio.CancelledError:
                # The caller's task was cancelled mid-run: the worker is still busy with it, and
                # the next run must not read this one's messages. Replace the worker.
                await asyncio.shield(self.restart("the previous run was abandoned mid-run"))
                raise
            finally:
                self._running = False

    async def _run_locked(
        self,
        path: str | os.PathLike[str],
        settings: Settings,
        emit: EventHandler,
        timing: bool,
        min_run_time: float,
        trace: bool,
        timeout_s: float | None,
    ) -> dict[str, Any]:
        started = time.perf_counter()
        try:
            source = read_snippet(path)
        except SnippetError as exc:
            version = (self.hello or {}).get("torch_version", "")
            report = empty_report(str(Path(path).absolute()), settings, exc.error, version)
            return self._stamp(report, exc.sha256, started)
        if not self.alive:
            if self.hello is not None or self.restarts:
                await self.restart("the previous worker had exited", emit)
            else:
                await self.start()
        timeout = timeout_s or self.timeout_s
        self._next_id += 1
        run_id = self._next_id
        request = {
            "op": "run",
            "id": run_id,
            "path": source.path,
            "source": source.text,
            "settings": settings.to_dict(),
            "timeout_s": timeout,
            "timing": timing,
            "min_run_time": min_run_time,
            "trace": trace,
        }
        emit({"event": "progress", "phase": "queued", "call": None, "calls": None, "message": "sent to the worker"})
        await self._send(request)
        last_phase = "loading the snippet"
        deadline = time.monotonic() + timeout
        while True:
            if self._cancel_upto >= self._current:
                return await self._finish_cancel(run_id, emit)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return await self._timed_out(source.path, settings, timeout, last_phase, started, emit, source.sha256)
            try:
                message = await asyncio.wait_for(self._read_message(), min(remaining, 0.25))
            except asyncio.TimeoutError:
                continue
            except (EOFError, ConnectionError):
                return await self._died(source.path, settings, last_phase, started, emit, source.sha256)
            if message.get("id") != run_id:
                continue  # a late message of a cancelled run
            event = message.get("event")
            if event == "progress":
                last_phase = message.get("message", last_phase)
                emit(message)
            elif event == "diagnostics":
                diag = self._stamp(message["report"], source.sha256, started)
                emit({"event": "diagnostics", "report": diag})
            elif event == "cancelled":
                raise RunCancelled()
            elif event == "report":
                report = self._stamp(message["report"], source.sha256, started)
                await self._maybe_recycle(report, emit)
                return report

    def _stamp(self, report: dict[str, Any], sha: str | None, started: float) -> dict[str, Any]:
        report = dict(report)
        if sha is not None:
            report["content_sha256"] = sha
        report.setdefault("content_sha256", "")
        report["wall_s"] = round(time.perf_counter() - started, 4)
        if self._pending_restart and report.get("stage") == "complete":
            report["worker_restarted"] = True
            report["worker_restart_reason"] = self._pending_restart
            self._pending_restart = ""
        else:
            report.setdefault("worker_restarted", False)
        return report

    async def _maybe_recycle(self, report: dict[str, Any], emit: EventHandler) -> None:
        rss = (report.get("worker") or {}).get("rss_mb") or 0
        if rss and rss > self.rss_limit_mb:
            reason = f"recycled: worker RSS {rss:.0f} MiB passed the {self.rss_limit_mb:.0f} MiB ceiling"
            report.setdefault("notes", []).append(reason)
            await self.restart(reason, emit)

    async def _died(
        self, path: str, settings: Settings, phase: str, started: float, emit: EventHandler, sha: str
    ) -> dict[str, Any]:
        assert self.proc is not None
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.proc.wait(), 5.0)
        if self._stderr_task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._stderr_task, 2.0)
        code = self.proc.returncode
        if code is not None and code < 0:
            try:
                how = f"killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"killed by signal {-code}"
        else:
            how = f"exited with code {code}"
        return await self._worker_failure(
            path,
            settings,
            sha,
            started,
            emit,
            "WorkerDied",
            lambda where: f"the worker process {how}{where} while {phase}; a fresh worker was started",
            f"the previous worker {how} while {phase}",
        )

    async def _timed_out(
        self, path: str, settings: Settings, timeout: float, phase: str, started: float, emit: EventHandler, sha: str
    ) -> dict[str, Any]:
        await asyncio.sleep(0.3)  # let faulthandler's stack dump arrive on stderr
        return await self._worker_failure(
            path,
            settings,
            sha,
            started,
            emit,
            "Timeout",
            lambda where: (
                f"the run timed out after {timeout:g} s while {phase}{where}; the worker was killed and restarted"
            ),
            f"the previous run timed out after {timeout:g} s",
        )

    async def _worker_failure(
        self,
        path: str,
        settings: Settings,
        sha: str,
        started: float,
        emit: EventHandler,
        exc_type: str,
        message: Callable[[str], str],
        restart_reason: str,
    ) -> dict[str, Any]:
        """The report of a run the worker did not survive (its stack read from stderr, where
        faulthandler dumped it), then a fresh worker."""
        stack = self.stderr_text()
        line = snippet_line_in_stack(stack, path)
        where = f" at line {line}" if line else ""
        error = {"kind": "worker", "type": exc_type, "message": message(where), "line": line, "detail": stack[-4000:]}
        version = (self.hello or {}).get("torch_version", "")
        report = self._stamp(empty_report(path, settings, error, version), sha, started)
        await self.restart(restart_reason, emit)
        return report

    async def cancel(self) -> None:
        """Cancel the run in flight: ask the worker to stop at its next checkpoint; if it does
        not within the grace period (a long Inductor compile), kill and restart it."""
        self._cancel_upto = self._submitted
        if self._running:
            async with self._run_lock:
                pass

    async def _finish_cancel(self, run_id: int, emit: EventHandler) -> dict[str, Any]:
        with contextlib.suppress(Exception):
            await self._send({"op": "cancel", "id": run_id})
        deadline = time.monotonic() + self.cancel_grace_s
        while time.monotonic() < deadline:
            try:
                message = await asyncio.wait_for(self._read_message(), max(deadline - time.monotonic(), 0.01))
            except asyncio.TimeoutError:
                break
            except (EOFError, ConnectionError):
                break
            if message.get("id") == run_id and message.get("event") in ("cancelled", "report"):
                raise RunCancelled()
        await self.restart("the previous run was cancelled mid-compile", emit)
        raise RunCancelled()
