"""Torch's compiler bisector from a front end, torch-free: the command that runs it in its own
worker process (`python -m playground.worker.run.bisection.bisect`, a new process group), its progress
lines read as typed steps, and its one result. `compile-playground bisect` runs it blocking;
the app runs `bisect` in a Textual worker, and cancelling that kills the whole group."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

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


@dataclass(frozen=True)
class BisectStep:
    """One progress line, sent as a step starts: its number, where the bisector stands (the
    backend it tests, the subsystem, the run state, the range left) and, once it is halving a
    range, the most steps the bisection can take."""

    steps: int
    stage: str | None = None
    subsystem: str | None = None
    low: int | None = None
    high: int | None = None
    #: torch's run state for the subsystem: "test_disable", "find_max_bounds" or "bisect".
    state: str | None = None
    #: For a subsystem that is one config switch, the switch as the step sets it.
    change: str | None = None
    at_most: int | None = None

    @classmethod
    def from_event(cls, event: dict[str, Any]) -> BisectStep:
        def number(key: str) -> int | None:
            value = event.get(key)
            return value if isinstance(value, int) and not isinstance(value, bool) else None

        def text(key: str) -> str | None:
            value = event.get(key)
            return value if isinstance(value, str) and value else None

        return cls(
            number("steps") or 0,
            text("stage"),
            text("subsystem"),
            number("low"),
            number("high"),
            text("state"),
            text("change"),
            number("at_most"),
        )

    def words(self) -> str:
        """ "step 9 of at most 12: inductor post_grad_passes, range 0..7"; before a range is
        halved, what the step tries: "try backend aot_eager", "inductor: try without
        post_grad_passes", "inductor: try inductor.fallback_random=True"."""
        bound = f" of at most {self.at_most}" if self.at_most is not None else ""
        if self.state == "test_disable":
            what = f"{self.stage}: try {self.change or f'without {self.subsystem}'}"
        elif self.state == "find_max_bounds":
            what = f"{self.stage}: count the {self.subsystem} applied"
        elif self.stage and not self.subsystem:
            what = f"try backend {self.stage}"
        else:
            what = " ".join(w for w in (self.stage, self.subsystem) if w) or "starting"
        span = f", range {self.low}..{self.high}" if self.low is not None and self.high is not None else ""
        return f"step {self.steps}{bound}: {what}{span}"


class BisectFailed(Exception):
    """The bisection could not run: the snippet fails on its own, or the process ended early."""


def read_line(raw: str | bytes) -> tuple[str, Any] | None:
    """One line of the bisection's channel: ("progress", BisectStep), ("result", BisectResult),
    ("error", "PHASE error: message"), or None for a line that is none of them."""
    try:
        event = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(event, dict):
        return None
    kind = event.get("event")
    if kind == "progress":
        return "progress", BisectStep.from_event(event)
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
    on_step: Callable[[BisectStep], None],
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
