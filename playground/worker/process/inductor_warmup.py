"""Inductor's one-time start-up in the template (its modules, the C++ compiler's and the vector
ISA's probes, a warm-up compile), which every child forked after it inherits: when a run waits
for it, when a session's template takes it between runs, and doing it. Worker-side."""

from __future__ import annotations

import os
from collections.abc import Callable

from playground.worker.process import reexec, warmup
from playground.worker.process.channel import Channel
from playground.worker.run.spine.request import WorkerRequest


def before(request: WorkerRequest) -> bool:
    """Whether the run waits for Inductor's start-up: its backend is inductor and its source
    parses. A file saved mid-edit (or a `check` of a broken one) fails at load, in a few
    milliseconds; warming Inductor first would make it wait for the warm-up (20-30 s on a machine
    whose Inductor cache is cold) only to report a syntax error. The next run that parses warms it.

    A program's backend is its own unless the user set one: one that compiles with Inductor pays
    Inductor's start-up in its own run, as under `python PROG`, and one that does not (backend
    "eager") pays nothing. Warmed first, it cost every program the start-up and a compile of our
    own: a backend-eager program's `check` took 5.9 s where `python PROG` took 3.7 s (3.5 s without
    the warm-up). A session's later runs get a template warmed after the first (`after`).

    Nor a worker's last run (a one-shot `check`): no later child inherits the start-up, and the
    run's own first compile does it as a fresh `python` does (its timings say so: "first
    Inductor run in this worker"), where the warm-up compiled a snippet of ours first, which
    with Inductor's caches cold took its C++ compile (`check --backend inductor --no-timing` of
    the default snippet with an empty cache folder: 18-21 s with the warm-up, 11.6-14.4 s
    without)."""
    if request.run.last:
        return False
    if request.run.program is not None and "backend" not in request.run.program.toggled:
        return False
    if request.run.settings.backend != "inductor":
        return False
    try:
        compile(request.run.text, request.run.path or "<snippet>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError):  # ValueError: a NUL byte in the source
        return False
    return True


def after(request: WorkerRequest, inductor_warm: bool, queued: bool) -> bool:
    """Whether to warm Inductor now, after a program's run in a session that goes on (the app,
    `watch`) and before its next request: the run itself was not held up for it (`before`), and
    the next save's child inherits it as a snippet's does. Not with a request already waiting:
    that one warms first if it needs to."""
    return request.run.program is not None and not inductor_warm and not queued


def warm(
    channel: Channel,
    request: WorkerRequest | None,
    warm_backend: Callable[[str], float],
    drop_spare: Callable[[], None],
    pending: list[WorkerRequest],
) -> None:
    """The start-up, before `request` (which is told so) or between runs (request None)."""
    if request is not None:
        channel.send(reexec.progress(request.id, "starting Inductor in the worker (once per worker)"))
    drop_spare()  # it was forked before Inductor was warm
    if os.environ.get("COMPILE_PLAYGROUND_INDUCTOR_WARMUP", "1") != "0":
        warm_backend("inductor")
        warmup.freeze()
        if not warmup.fork_probe():
            # Inductor's warm-up kernels started a pool after all: this template can no longer
            # fork safely. Start over (the request included) without that warm-up.
            again = [request] if request is not None else []
            reexec.restart_unwarmed(channel, "COMPILE_PLAYGROUND_INDUCTOR_WARMUP", [*again, *pending])
