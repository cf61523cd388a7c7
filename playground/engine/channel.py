"""The worker process and its pipes, seen from the client: spawn, JSON-lines framing, the
stderr log, kill. Torch-free; knows nothing about runs (playground/engine/client.py does).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from playground.engine import scratch
from playground.engine.caps import cap_all
from playground.engine.errors import WorkerUnavailable
from playground.engine.hello import WorkerHello

HELLO_TIMEOUT_S = 180.0
#: How long a closing template is given to read the shutdown line and leave: one waiting for
#: requests, or for a run's child, reads it at once, kills what is below it and exits in a few
#: milliseconds. One busy in torch's own code (importing torch, warming Inductor, importing a
#: snippet's libraries) reads nothing until that ends, seconds later: it is sent SIGTERM instead.
CLOSE_GRACE_S = 0.15
#: How long a template sent SIGTERM is given to kill what is below it (its handler runs between
#: two bytecodes of whatever it was doing) before its process group is killed: the handler also
#: reaches what a snippet started in a session of its own, which the group's kill does not.
TERM_GRACE_S = 0.2
#: The key of a run's request: a secret the client makes for each run, which every message
#: about the run must carry back. The snippet runs in the process that writes the run's
#: messages, so the descriptor they go out on is the snippet's to write on too: a line it writes
#: there lacks the key and is never believed. (Only a snippet that goes looking for the key in
#: its own process's memory could find it.)
RUN_KEY = "key"
_STREAM_LIMIT = 256 * 2**20

Message = dict[str, Any]


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _pidfd_of(pid: int) -> int | None:
    """A pidfd for our child `pid` (Linux 5.3+), or None where there is none."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


async def _exited(proc: asyncio.subprocess.Process, timeout: float) -> bool:
    """Whether `proc` ends within `timeout` seconds."""
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(proc.wait(), timeout)
    return proc.returncode is not None


def _project_root() -> str:
    return str(Path(__file__).resolve().parents[2])


class StderrLog:
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


class WorkerChannel:
    """One worker process (the template) and its pipes. `next()` hands out its messages in
    order; `hello` is the template's greeting (torch imported and warmed), None until then."""

    def __init__(self, python: str = sys.executable) -> None:
        self.python = python
        self.hello: WorkerHello | None = None
        self.proc: asyncio.subprocess.Process | None = None
        #: The template's pidfd (Linux), for signals that never reap it (_signal says why).
        self._pidfd: int | None = None
        self.stderr = StderrLog()
        self._stderr_task: asyncio.Task[None] | None = None
        self._reader_task: asyncio.Task[None] | None = None
        self._messages: asyncio.Queue[Message | None] = asyncio.Queue()
        self.scratch: str | None = None

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    async def spawn(self) -> WorkerHello:
        """Start the worker and wait for its hello; WorkerUnavailable when it does not come."""
        env = dict(os.environ)
        root = _project_root()
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env[scratch.ADDED_PYTHONPATH] = root  # a run takes it off again: the user's code sees theirs
        env.setdefault("PYTHONUNBUFFERED", "1")
        self.scratch = scratch.make()
        scratch.worker_env(env, self.scratch)
        try:
            proc = await self._start(env)
        except BaseException:
            scratch.remove(self.scratch)
            raise
        self.proc = proc
        self._pidfd = _pidfd_of(proc.pid)
        self._messages = asyncio.Queue()
        self._stderr_task = asyncio.create_task(self._drain_stderr(proc))
        self._reader_task = asyncio.create_task(self._read_messages(proc, self._messages))
        try:
            message = await asyncio.wait_for(self._messages.get(), HELLO_TIMEOUT_S)
        except asyncio.TimeoutError:
            message = None
        if message is None or message.get("event") != "hello":
            said = self.stderr.text()
            await self.kill()
            what = f"unexpected first message {message!r}" if message else why_not_started(said) or "no answer"
            raise WorkerUnavailable(f"the torch worker did not start: {what}")
        return self.greeted(message)

    def greeted(self, message: Message) -> WorkerHello:
        """The template's "hello" message, read once: the handshake every reader uses."""
        self.hello = WorkerHello.from_dict(message)
        return self.hello

    async def _start(self, env: dict[str, str]) -> asyncio.subprocess.Process:
        # The worker speaks only over its pipes: never a network port.
        return await asyncio.create_subprocess_exec(
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

    async def shutdown(self) -> None:
        """Ask the template to leave (it kills what its runs left), then kill its group: at once
        where it cannot answer, so that quitting takes a fraction of a second in every phase.
        One still starting (no hello yet) is sent SIGTERM straight away; one that has not left
        CLOSE_GRACE_S after the line, too."""
        proc = self.proc
        if proc is not None and proc.returncode is None:
            if proc.stdin is not None:
                with contextlib.suppress(Exception):
                    proc.stdin.write(b'{"op": "shutdown"}\n')
                    proc.stdin.close()  # EOF: the template stops even if it missed the line
            if self.hello is None or not await _exited(proc, CLOSE_GRACE_S):
                self._signal(proc, signal.SIGTERM)
                await _exited(proc, TERM_GRACE_S)
        await self.kill()

    async def kill(self) -> None:
        """Kill the template, then whatever is left in its process group."""
        proc = self.proc
        if proc is None:
            scratch.remove(self.scratch)
            return
        self._signal(proc, signal.SIGKILL)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(proc.wait(), 5.0)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        if self._pidfd is not None:
            with contextlib.suppress(OSError):
                os.close(self._pidfd)
            self._pidfd = None
        scratch.remove(self.scratch)
        for task in (self._reader_task, self._stderr_task):
            if task is not None:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(task, 1.0)
        self.hello = None

    def _signal(self, proc: asyncio.subprocess.Process, sig: int) -> None:
        """`sig` to the template, never through Popen: its send_signal and kill poll first, and
        a poll that finds the template just exited reaps it ahead of asyncio's child watcher,
        which then writes "Unknown child process pid N, will report returncode 255" on the
        user's stderr (seen once in a `check` on a loaded machine, where the template outlived
        the close's 0.15 s grace by a hair). Through its pidfd, a signal to a process that has
        ended is refused, never sent to another that took its pid."""
        if proc.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            if self._pidfd is not None:
                signal.pidfd_send_signal(self._pidfd, sig)
            else:
                os.kill(proc.pid, sig)

    def kill_now(self) -> None:
        """Kill the worker's process group and remove its scratch folder, at once and without
        the loop: the last resort of a process that is about to end however stuck it is."""
        proc = self.proc
        if proc is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
        scratch.remove(self.scratch)

    async def exit_words(self) -> str:
        """How the template ended ("was killed by SIGKILL", "exited with code 1"), once it has."""
        proc = self.proc
        assert proc is not None
        with contextlib.suppress(Exception):
            await asyncio.wait_for(proc.wait(), 5.0)
        code = proc.returncode
        return f"was killed by {signal_name(-code)}" if code is not None and code < 0 else f"exited with code {code}"

    # --- I/O -----------------------------------------------------------------------------------

    async def _drain_stderr(self, proc: asyncio.subprocess.Process) -> None:
        assert proc.stderr is not None
        while True:
            line = await proc.stderr.readline()
            if not line:
                return
            self.stderr.append(line.decode("utf-8", "replace"))

    @staticmethod
    async def _read_messages(proc: asyncio.subprocess.Process, queue: asyncio.Queue[Message | None]) -> None:
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
                    # Capped again on this side: no message, whoever wrote it, brings more.
                    queue.put_nowait(cap_all(message))
        except (ConnectionError, asyncio.LimitOverrunError, ValueError):
            return
        finally:
            queue.put_nowait(None)

    async def send(self, message: Message) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        await self.proc.stdin.drain()

    def send_nowait(self, message: Message) -> None:
        with contextlib.suppress(Exception):
            assert self.proc is not None and self.proc.stdin is not None
            self.proc.stdin.write((json.dumps(message) + "\n").encode())

    async def next(self, timeout: float, wake: asyncio.Event) -> tuple[str, Message | None]:
        """("message", m), ("eof", None), ("wake", None) when `wake` is set first (a cancel),
        or ("timeout", None)."""
        get = asyncio.ensure_future(self._messages.get())
        woken = asyncio.ensure_future(wake.wait())
        try:
            done, _ = await asyncio.wait({get, woken}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            woken.cancel()
            if not get.done():
                get.cancel()
        if get in done:
            message = get.result()
            return ("message", message) if message is not None else ("eof", None)
        if woken in done:
            return "wake", None
        return "timeout", None


def why_not_started(stderr: str) -> str:
    """What a worker that died before its hello said, in one line: the exception its traceback
    ended with (where `import torch` itself raised, with the TORCH_LOGS it read from the
    environment: torch refuses a bad value at import, under plain python too), else the tail."""
    lines = stderr.splitlines()
    # The last traceback, less one python printed for an exit function ("Exception ignored in").
    starts = [
        i
        for i, line in enumerate(lines)
        if line.startswith("Traceback (most recent call last):")
        and not (i > 0 and lines[i - 1].startswith("Exception ignored in"))
    ]
    if not starts:
        return " ".join(stderr.split())[-2000:]
    after = lines[starts[-1] + 1 :]
    at = next((i for i, line in enumerate(after) if line and not line[0].isspace()), None)
    if at is None:
        return " ".join(stderr.split())[-2000:]
    # The exception's line; where its message begins on the next line (torch's bad TORCH_LOGS:
    # "ValueError: " then the words), that sentence or so too.
    spans = after[at].rstrip().endswith(":")
    raised = " ".join(" ".join(after[at : at + 4] if spans else after[at : at + 1]).split())
    raised = raised if len(raised) <= 240 else raised[:239] + "…"
    frames = "\n".join(after[:at])
    logs = os.environ.get("TORCH_LOGS")
    if logs is not None and "torch/_logging/" in frames:
        return f"import torch raised {raised} (TORCH_LOGS={logs!r} in the environment: python's import torch raises it too)"
    return raised
