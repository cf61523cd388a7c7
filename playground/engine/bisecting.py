"""Torch's compiler bisector from a front end, torch-free: the command that runs it in its own
worker process (`python -m playground.worker.run.bisection.bisect`, a new process group), its
progress lines read as typed steps (`BisectProgress`, playground/engine/events.py), and its one
result. `compile-playground bisect` runs it blocking; the app runs `bisect` in a Textual worker,
and cancelling that kills the whole group."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import Callable, Iterable
from typing import Any

from playground.engine.events import BisectProgress
from playground.engine.report.bisection import BisectResult

#: After SIGTERM (the bisection kills its step and removes its state), the group is killed.
STOP_GRACE_S = 1.0


def bisect_command(
    path: str,
    config: Iterable[tuple[str, Any]],
    python: str = sys.executable,
    timeout_s: float | None = None,
    settings: Iterable[tuple[str, Any]] = (),
) -> list[str]:
    """The bisection's process: the snippet, each --config in its JSON syntax, the settings that
    override the snippet's SETTINGS (fullgraph, dynamic, mode, target: what the front end shows),
    and the most seconds one step may take (the worker's own default when None)."""
    # --parent: the bisection ends itself when this process is gone, even if it went before the
    # bisection could ask the kernel for a parent-death signal.
    command = [
        python,
        "-m",
        "playground.worker.run.bisection.bisect",
        os.path.abspath(path),
        "--parent",
        str(os.getpid()),
    ]
    for key, value in config:
        command += ["--config", f"{key}={json.dumps(value)}"]
    for key, value in settings:
        command += ["--setting", f"{key}={json.dumps(value)}"]
    if timeout_s is not None:
        command += ["--timeout", repr(float(timeout_s))]
    return command


class BisectFailed(Exception):
    """The bisection could not run: the snippet fails on its own, or the process ended early."""


def read_line(raw: str | bytes) -> tuple[str, Any] | None:
    """One line of the bisection's channel: ("progress", BisectProgress), ("result", BisectResult),
    ("error", "PHASE error: message"), or None for a line that is none of them."""
    try:
        event = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(event, dict):
        return None
    kind = event.get("event")
    progress = BisectProgress.from_dict(event)
    if progress is not None:
        return "progress", progress
    if kind == "result":
        return "result", BisectResult.from_event(event)
    if kind == "error":
        known = ("snippet", "compile", "settings", "worker")
        phase = event.get("phase") if event.get("phase") in known else "worker"
        return "error", f"{phase} error: {event.get('message')}"
    return None


async def bisect(
    path: str,
    config: Iterable[tuple[str, Any]],
    on_step: Callable[[BisectProgress], None],
    python: str = sys.executable,
    settings: Iterable[tuple[str, Any]] = (),
) -> BisectResult:
    """Run the bisection to its result; cancelled, it stops the process group (nothing left)."""
    proc = await asyncio.create_subprocess_exec(
        *bisect_command(path, config, python, settings=settings),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        start_new_session=True,
    )
    result: BisectResult | None = None
    problem: str | None = None
    try:
        assert proc.stdout is not None
        async for raw in proc.stdout:
            read = read_line(raw)
            if read is None:
                continue
            kind, value = read
            if kind == "progress":
                on_step(value)
            elif kind == "result":
                result = value
            else:
                problem = value
        await proc.wait()
    finally:
        await _stop(proc)
    if problem is not None:
        raise BisectFailed(problem)
    if result is None:
        raise BisectFailed(f"the bisection ended without a result (exit status {proc.returncode})")
    return result


async def _stop(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM to the group, then SIGKILL to whatever of it is left; reaped either way."""
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(proc.wait()), STOP_GRACE_S)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    # Read its stdout to the end, which closes the pipe (a cancelled read left it open, and its
    # transport was collected after the event loop had closed); then reaped.
    with contextlib.suppress(asyncio.TimeoutError, OSError, ValueError):
        await asyncio.wait_for(proc.communicate(), STOP_GRACE_S * 2)
    if proc.returncode is None:
        await proc.wait()
