"""The search itself: torch's compiler bisector run in a state folder of its own, with a fresh
process's verdict as its test; each step sends its `BisectProgress` as it starts. A step that
cannot be judged (it timed out, the snippet failed on its own, the bisector's state went) stops
the search with `StepStopped`; a compiled run that raises or dies fails the step, as in torch's
own bisector."""

from __future__ import annotations

import math
import os
import shutil
import tempfile
from collections.abc import Callable
from typing import Any

from playground.engine.events import BisectProgress
from playground.worker.run.bisection.forks import StepStopped, StepTimedOut, fresh_verdict


def at_most(steps: int, where: dict[str, Any]) -> int | None:
    """The most steps the bisection can take, counting this one, once it is halving a range
    (`low..high`, ceil(log2(size)) halvings); None before: until the bisector has counted a
    subsystem's applications, no bound is known."""
    low, high = where.get("low"), where.get("high")
    if where.get("state") != "bisect" or not isinstance(low, int) or not isinstance(high, int) or high < low:
        return None
    return steps - 1 + max(1, math.ceil(math.log2(high - low + 1)))


def progress(steps: int, where: dict[str, Any]) -> BisectProgress:
    """Step `steps` as it starts, where torch's bisector stands (`compat.bisect_progress()`)."""
    return BisectProgress(
        steps=steps,
        stage=where.get("stage"),
        subsystem=where.get("subsystem"),
        low=where.get("low"),
        high=where.get("high"),
        state=where.get("state"),
        change=where.get("change"),
        at_most=at_most(steps, where),
    )


def search(
    snippet: str,
    config: dict[str, Any],
    children: list[int],
    made: list[str],
    timeout_s: float,
    send: Callable[[BisectProgress], None],
) -> tuple[dict[str, Any] | None, int]:
    """torch's bisector's culprit (None when the failure did not reproduce under it) and the
    steps it took. Its state folder is on `made` while it runs (a signal removes it) and
    removed when it ends."""
    from playground.worker import compat
    from playground.worker.compat.bisector import bisect_status_file

    state = tempfile.mkdtemp(prefix="compile-playground-bisect-")
    made.append(state)
    steps = 0

    def test() -> bool:
        nonlocal steps
        steps += 1
        now = progress(steps, compat.bisect_progress())
        send(now)
        try:
            judged = fresh_verdict(snippet, config, children, timeout_s)
        except StepTimedOut as exc:
            phase = "compile" if exc.eager_done else "snippet"
            raise StepStopped(phase, f"{now.words()}: did not finish in {timeout_s:g} s") from exc
        if not os.path.exists(bisect_status_file()):
            raise StepStopped(
                "worker",
                f"the bisection's state in {state} was removed while it ran (a cleaner of the "
                "temporary folder?): its answer would blame the wrong backend",
            )
        if isinstance(judged, tuple) and judged[0] == "snippet":
            # Its eager side failed on its own after passing the first verdict (randomness, a
            # file it reads): a bisection would blame the backend it stood at.
            raise StepStopped("snippet", f"the snippet failed on its own at step {steps}: {judged[1]}")
        return judged is True

    try:
        found = compat.bisect_in(state, test)
    finally:
        shutil.rmtree(state, ignore_errors=True)
    return found, steps
