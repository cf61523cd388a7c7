"""A template that cannot fork safely starts over: it re-execs itself with one warm-up turned
off and hands the requests it held to its successor in a file. Worker-side."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import tempfile
from typing import Any

from playground.engine.events import Progress
from playground.worker.process.channel import Channel
from playground.worker.run.spine.request import WorkerRequest


def progress(run_id: Any, message: str, phase: str = "loading") -> dict[str, Any]:
    """A progress event the template sends for a run (its own work on the run's behalf)."""
    return Progress(phase, message=message, run_id=run_id).to_dict()


def restart_unwarmed(channel: Channel, switch: str, requests: list[WorkerRequest], reason: str = "") -> None:
    """Replace this process by a fresh worker with the warm-up `switch` turned off; the requests
    it held are handed over in a file (the client ignores the second hello). The caller has
    dropped its spare child. Never returns."""
    why = reason or "forked children hang after a warm-up"
    print(f"compile-playground: {why}; restarting with {switch}=0", file=sys.stderr)
    os.environ[switch] = "0"
    if requests:
        fd, path = tempfile.mkstemp(prefix="compile-playground-requeue-", suffix=".json")
        with os.fdopen(fd, "w") as fh:
            json.dump([request.to_message() for request in requests], fh)
        os.environ["COMPILE_PLAYGROUND_REQUEUE"] = path
    os.dup2(channel.in_fd, 0)  # the channel goes back where a new worker looks for it
    os.dup2(channel.out_fd, 1)
    os.execv(sys.executable, [sys.executable, "-m", "playground.worker"])


def requeued() -> list[WorkerRequest]:
    """The requests a restarted template was handed (see restart_unwarmed)."""
    path = os.environ.pop("COMPILE_PLAYGROUND_REQUEUE", "")
    if not path:
        return []
    try:
        with open(path) as fh:
            return [WorkerRequest.from_message(m) for m in json.load(fh) if isinstance(m, dict)]
    except (OSError, ValueError):
        return []
    finally:
        with contextlib.suppress(OSError):
            os.unlink(path)
