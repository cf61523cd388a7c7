"""The client side of the warm worker: spawns it, sends runs, reads events. Torch-free.

Shared by the CLI (`check`, `watch`, `matrix`) and the Textual app, which injects it as its
engine. Everything is asyncio so the app's event loop never blocks on the worker.

The worker (playground/worker/main.py) is a template process that forks one child per run. A cancel
or a timeout kills that child and the template stays; only the template's own death (or a
template that stops answering) brings a restart, which pays the torch import again.
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

from playground.engine.errors import RunCancelled, WorkerUnavailable
from playground.engine.report import blank_report
from playground.engine.settings import Settings, snippet_settings_error
from playground.engine.snippet import SnippetError, read_snippet, snippet_line_in_stack

EventHandler = Callable[[dict[str, Any]], None]

#: Default run timeout: a snippet that loops forever is killed after this many seconds.
DEFAULT_TIMEOUT_S = 120.0
HELLO_TIMEOUT_S = 180.0
#: How long the template may take to kill a run and say so before it is deemed stuck.
ANSWER_TIMEOUT_S = 10.0
#: How long a closing template may take to kill its runs and leave (it gives a compiler
#: STRAGGLER_GRACE_S to finish writing) before its process group is killed.
CLOSE_GRACE_S = 3.0
_STREAM_LIMIT = 256 * 2**20


__all__ = ["RunCancelled", "WorkerClient", "WorkerUnavailable", "empty_report"]


def _valid_timeout(value: float) -> float:
    if not isinstance(value, (int, float)) or value != value or value <= 0 or value == float("inf"):
        raise ValueError(f"a run timeout must be a positive number of seconds, not {value!r}")
    return float(value)


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _project_root() -> str:
    return str(Path(__file__).resolve().parents[1])


def empty_report(path: str, settings: Settings, error: dict[str, Any], torch_version: str = "") -> dict[str, Any]:
    """A contract-shaped report for a run that never reached torch."""
    return blank_report(str(path), settings.to_dict(), error, torch_version)


class _StderrLog:
    """The worker's stderr, drained continuously: the tail, and how much came before a mark."""

    def __init__(self, keep: int = 400) -> None:
        self.lines: collections.deque[str] = collections.deque(maxlen=keep)
        self.count = 0

    def append(self, line: str) -> None:
        self.lines.append(line)
        self.count += 1

    def since(self, mark: int) -> str:
        new = self.count - mark
        if new <= 0:
            return ""
        return "".join(list(self.lines)[-new:])

    def text(self) -> str:
        return "".join(self.lines)


class WorkerClient:
    """One warm torch worker (a template that forks a child per run) and the runs sent to it,
    one at a time."""

    def __init__(self, *, timeout_s: float = DEFAULT_TIMEOUT_S, python: str = sys.executable) -> None:
        self.timeout_s = _valid_timeout(timeout_s)
        self.python = python
        self.hello: dict[str, Any] | None = None
        self.proc: asyncio.subprocess.Process | None = None
        self.stderr = _StderrLog()
        self.restarts = 0
        self._pending_restart: str = ""
        self._stderr_task: asyncio.Task[None] | None = None
        self._reader_task: asyncio.Task[None] | None = None
        self._messages: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._run_lock = asyncio.Lock()
        self._start_lock = asyncio.Lock()
        #: Runs are numbered as they are submitted; cancel() cancels every run submitted before
        #: it, including one still waiting for the lock, and wakes the one in flight.
        self._submitted = 0
        self._cancel_upto = 0
        self._cancel_event = asyncio.Event()
        self._running = False
        self._current = 0
        self._next_id = 0
        self._closed = False

    # --- lifecycle ---------------------------------------------------------------------------

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    async def start(self) -> dict[str, Any]:
        """Spawn the worker if needed and wait for its hello (torch imported and warmed)."""
        async with self._start_lock:
            if self.alive and self.hello is not None:
                return self.hello
            if self._closed:
                raise WorkerUnavailable("the engine is closed")
            env = dict(os.environ)
            root = _project_root()
            env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
            env.setdefault("PYTHONUNBUFFERED", "1")
            # The worker speaks only over its pipes: never a network port.
            proc = await asyncio.create_subprocess_exec(
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
            self.proc = proc
            self._messages = asyncio.Queue()
            self._stderr_task = asyncio.create_task(self._drain_stderr(proc))
            self._reader_task = asyncio.create_task(self._read_messages(proc, self._messages))
            try:
                message = await asyncio.wait_for(self._messages.get(), HELLO_TIMEOUT_S)
            except asyncio.TimeoutError:
                message = None
            if message is None or message.get("event") != "hello":
                tail = self.stderr.text()[-2000:]
                await self._kill()
                what = f"unexpected first message {message!r}" if message else tail or "no answer"
                raise WorkerUnavailable(f"the torch worker did not start: {what}")
            self.hello = message
            return message

    async def close(self) -> None:
        """Shut the worker down: a run in flight is cancelled (its child killed at once), the
        template kills what the runs left and exits; its process group is killed after that."""
        self._closed = True
        self._cancel_upto = self._submitted
        self._cancel_event.set()
        proc = self.proc
        if proc is not None and proc.returncode is None and proc.stdin is not None:
            with contextlib.suppress(Exception):
                proc.stdin.write(b'{"op": "shutdown"}\n')
                proc.stdin.close()  # EOF: the template stops even if it missed the line
            with contextlib.suppress(Exception):
                await asyncio.wait_for(proc.wait(), CLOSE_GRACE_S)
        await self._kill()

    async def _kill(self) -> None:
        """Kill the template, then whatever is left in its process group."""
        proc = self.proc
        if proc is None:
            return
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(proc.wait(), 5.0)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        for task in (self._reader_task, self._stderr_task):
            if task is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(task, 1.0)
        self.hello = None

    async def _restart(self, reason: str, emit: EventHandler) -> None:
        await self._kill()
        if self._closed:
            return  # closing: a dying run must not bring a new worker up
        self.restarts += 1
        self._pending_restart = reason
        emit({"event": "restarted", "reason": reason})
        await self.start()

    # --- I/O -----------------------------------------------------------------------------------

    async def _drain_stderr(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stderr is not None
        while True:
            line = await proc.stderr.readline()
            if not line:
                return
            self.stderr.append(line.decode("utf-8", "replace"))

    def stderr_text(self) -> str:
        return self.stderr.text()

    @staticmethod
    async def _read_messages(proc: asyncio.subprocess.Process, queue: asyncio.Queue[dict[str, Any] | None]) -> None:
        """Every message of the worker into `queue`, None at the end. A line that is not JSON
        is the torn end of a child killed mid-write (the template ends it with a newline)."""
        assert proc.stdout is not None
        try:
            while True:
                line = await proc.stdout.readline()
                if not line:
                    return
                if not line.strip():
                    continue
                try:
                    message = json.loads(line)
                except ValueError:
                    continue
                if isinstance(message, dict):
                    queue.put_nowait(message)
        except (ConnectionError, asyncio.LimitOverrunError, ValueError):
            return
        finally:
            queue.put_nowait(None)

    async def _send(self, message: dict[str, Any]) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        await self.proc.stdin.drain()

    def _send_nowait(self, message: dict[str, Any]) -> None:
        with contextlib.suppress(Exception):
            assert self.proc is not None and self.proc.stdin is not None
            self.proc.stdin.write((json.dumps(message) + "\n").encode())

    async def _next(self, timeout: float) -> tuple[str, dict[str, Any] | None]:
        """("message", m), ("eof", None), ("cancel", None) or ("timeout", None)."""
        get = asyncio.ensure_future(self._messages.get())
        cancel = asyncio.ensure_future(self._cancel_event.wait())
        try:
            done, _ = await asyncio.wait({get, cancel}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            cancel.cancel()
            if not get.done():
                get.cancel()
        if get in done:
            message = get.result()
            return ("message", message) if message is not None else ("eof", None)
        if cancel in done:
            return "cancel", None
        return "timeout", None

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
        dynamo_code: bool = False,
    ) -> dict[str, Any]:
        """Run the snippet at `path` once; always returns a contract report dict (errors are
        data in report["error"]), or raises RunCancelled."""
        emit = on_event or (lambda event: None)
        timeout = _valid_timeout(timeout_s) if timeout_s is not None else self.timeout_s
        self._submitted += 1
        number = self._submitted
        async with self._run_lock:
            if self._cancel_upto >= number or self._closed:
                raise RunCancelled()
            self._cancel_event.clear()
            self._running = True
            self._current = number
            try:
                return await self._run_locked(
                    path, settings, emit, timing, min_run_time, trace, timeout, dynamo_code=dynamo_code
                )
            except asyncio.CancelledError:
                # The caller's task was cancelled mid-run: have the template kill the child. Its
                # late messages carry its id and are skipped by the next run.
                self._send_nowait({"op": "cancel", "id": self._next_id})
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
        timeout: float,
        dynamo_code: bool = False,
    ) -> dict[str, Any]:
        started = time.perf_counter()
        version = (self.hello or {}).get("torch_version", "")
        try:
            source = read_snippet(path)
        except SnippetError as exc:
            report = empty_report(str(Path(path).absolute()), settings, exc.error, version)
            return self._stamp(report, exc.sha256, started)
        # A bad SETTINGS is named, never silently ignored (check and watch refuse it before a run;
        # the app, which reruns on every save, learns it here).
        settings_error = snippet_settings_error(source.text)
        if settings_error is not None:
            return self._stamp(empty_report(source.path, settings, settings_error, version), source.sha256, started)
        if not self.alive:
            if self._pending_restart or self.hello is not None:
                reason = self._pending_restart or "the previous worker had exited"
                await self._restart(reason, emit)
            else:
                await self.start()
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
            "dynamo_code": dynamo_code,  # issue 12: depyf in the child, only when asked
        }
        stderr_mark = self.stderr.count
        emit({"event": "progress", "phase": "queued", "call": None, "calls": None, "message": "sent to the worker"})
        await self._send(request)
        run = _RunFailures(self, source.path, settings, source.sha256, started, stderr_mark)
        # The template enforces `timeout` on the child; this only catches a template that stopped
        # answering (it may first spend a while starting Inductor, once).
        backstop = timeout + HELLO_TIMEOUT_S
        deadline = time.monotonic() + backstop
        while True:
            kind, message = await self._next(max(deadline - time.monotonic(), 0.0))
            if kind == "cancel":
                if self._cancel_upto >= self._current or self._closed:
                    self._send_nowait({"op": "cancel", "id": run_id})
                    raise RunCancelled()
                self._cancel_event.clear()
                continue
            if kind == "eof":
                return await run.template_died(emit)
            if kind == "timeout":
                return await run.template_stuck(emit, timeout)
            assert message is not None
            if message.get("event") == "hello":
                self.hello = message  # the worker replaced itself (a warm-up it had to undo)
                continue
            if message.get("id") != run_id:
                continue  # a late message of a cancelled run
            deadline = time.monotonic() + backstop
            event = message.get("event")
            if event == "progress":
                run.phase = message.get("message", run.phase)
                emit(message)
            elif event == "diagnostics":
                emit({"event": "diagnostics", "report": self._stamp(message["report"], source.sha256, started)})
            elif event == "report":
                return self._stamp(message["report"], source.sha256, started)
            elif event == "ended":
                return await run.child_ended(message, timeout)

    def _stamp(self, report: dict[str, Any], sha: str | None, started: float) -> dict[str, Any]:
        report = dict(report)
        if sha is not None:
            report["content_sha256"] = sha
        report.setdefault("content_sha256", "")
        report["wall_s"] = round(time.perf_counter() - started, 4)
        if self._pending_restart and report.get("stage") == "complete" and self.alive:
            report["worker_restarted"] = True
            report["worker_restart_reason"] = self._pending_restart
            self._pending_restart = ""
        else:
            report.setdefault("worker_restarted", False)
        return report

    async def cancel(self) -> None:
        """Cancel the run in flight and every run submitted before now: the template kills the
        run's child at once. Returns when the run in flight has let go of the worker."""
        self._cancel_upto = self._submitted
        self._cancel_event.set()
        if self._running:
            async with self._run_lock:
                pass


class _RunFailures:
    """The reports of a run that ended without one of its own: its child died or timed out
    (the template lives on), or the template itself died or stopped answering (restarted)."""

    def __init__(
        self, client: WorkerClient, path: str, settings: Settings, sha: str, started: float, stderr_mark: int
    ) -> None:
        self.client = client
        self.path = path
        self.settings = settings
        self.sha = sha
        self.started = started
        self.stderr_mark = stderr_mark
        self.phase = "loading the snippet"

    async def _report(self, exc_type: str, message: str) -> dict[str, Any]:
        await asyncio.sleep(0.05)  # let the stack dump that preceded the kill arrive on stderr
        stack = self.client.stderr.since(self.stderr_mark)
        line = snippet_line_in_stack(stack, self.path)
        where = f" at line {line}" if line else ""
        error = {
            "kind": "worker",
            "type": exc_type,
            "message": message.format(where=where),
            "line": line,
            "detail": stack[-4000:],
        }
        version = (self.client.hello or {}).get("torch_version", "")
        return self.client._stamp(empty_report(self.path, self.settings, error, version), self.sha, self.started)

    async def child_ended(self, message: dict[str, Any], timeout: float) -> dict[str, Any]:
        outcome = message.get("outcome")
        if outcome == "timeout":
            return await self._report(
                "Timeout", f"the run timed out after {timeout:g} s while {self.phase}{{where}}; its process was killed"
            )
        if outcome == "cancelled":
            raise RunCancelled()
        if "signal" in message:
            sig = str(message["signal"])
            hint = " (SIGKILL from outside is most often the kernel's out-of-memory killer)" if sig == "SIGKILL" else ""
            how = f"was killed by {sig}{hint}"
        elif message.get("returncode") == 0:
            how = "exited before reporting (the snippet called os._exit?)"
        else:
            how = f"exited with code {message.get('returncode')}"
        return await self._report("WorkerDied", f"the run's process {how} while {self.phase}{{where}}")

    async def template_died(self, emit: EventHandler) -> dict[str, Any]:
        proc = self.client.proc
        assert proc is not None
        with contextlib.suppress(Exception):
            await asyncio.wait_for(proc.wait(), 5.0)
        code = proc.returncode
        how = f"was killed by {_signal_name(-code)}" if code is not None and code < 0 else f"exited with code {code}"
        report = await self._report("WorkerDied", f"the worker process {how} while {self.phase}{{where}}")
        await self.client._kill()
        # The next run starts a fresh worker; none is started now for a run that may never come.
        self.client._pending_restart = f"the previous worker {how} while {self.phase}"
        return report

    async def template_stuck(self, emit: EventHandler, timeout: float) -> dict[str, Any]:
        report = await self._report(
            "Timeout",
            f"the worker stopped answering {timeout:g} s into a run, while {self.phase}{{where}}; it was killed",
        )
        await self.client._kill()
        self.client._pending_restart = "the previous worker stopped answering"
        return report
