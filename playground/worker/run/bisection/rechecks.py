"""Nothing is blamed unchecked: the first verdict is judged `REPEATS` times in fresh processes
before any step (a snippet whose verdict changes between identical runs is said to be
nondeterministic instead of bisected: a bisection of it names whichever backend a lucky draw
stopped at), and once the bisector names a culprit, its bad configuration (the culprit's
backend) and its good one (the backend before it, or the culprit's workaround) run again: the
result's `confidence` says how that went."""

from __future__ import annotations

from typing import Any

from playground.worker.run.bisection.forks import StepStopped, StepTimedOut, fresh_verdict

#: How many times the first verdict is judged (the same settings, each a fresh process).
REPEATS = 3
#: torch's compiler bisector's backends, each the one before with one more stage of torch.compile.
BACKEND_ORDER = ("eager", "aot_eager", "aot_eager_decomp_partition", "inductor")


def first_verdicts(snippet: str, config: dict[str, Any], children: list[int], timeout_s: float) -> list[bool]:
    """The first verdict, judged `REPEATS` times in fresh processes (True: eager and compiled
    agree). Raises StepStopped when it cannot be judged: the first run timed out, the snippet
    failed on its own in any run, or the first compiled run raised before any value was compared
    (bisecting that names backend eager, whatever the cause)."""
    try:
        first = fresh_verdict(snippet, config, children, timeout_s)
    except StepTimedOut as exc:
        what = "the compiled run" if exc.eager_done else "the snippet's eager run"
        raise StepStopped(
            "compile" if exc.eager_done else "snippet", f"{what} did not finish in {timeout_s:g} s"
        ) from exc
    if isinstance(first, tuple):
        phase, message = first
        if phase == "compile":
            message = f"the compiled run raised before any value was compared: {message}"
        raise StepStopped(phase, message)
    verdicts = [first]
    for run in range(2, REPEATS + 1):
        try:
            again = fresh_verdict(snippet, config, children, timeout_s)
        except StepTimedOut:
            again = ("compile", "timed out")
        if isinstance(again, tuple) and again[0] == "snippet":
            message = f"the snippet failed on its own in run {run} of {REPEATS} of the same settings: {again[1]}"
            raise StepStopped("snippet", message)
        verdicts.append(again is True)
    return verdicts


def nothing_to_bisect(verdicts: list[bool]) -> str | None:
    """Why the verdicts leave no culprit to look for (they changed between identical runs, or
    every run agreed); None when every run disagreed."""
    failed = sum(1 for agreed in verdicts if not agreed)
    if 0 < failed < len(verdicts):
        return (
            f"nondeterministic: the same settings gave different verdicts in {failed} of {len(verdicts)} runs "
            f"(eager and compiled disagreed {failed} times, agreed {len(verdicts) - failed}); a bisection of it "
            "would blame whichever backend a run happened to stop at"
        )
    if not failed:
        return f"eager and compiled (inductor) agree ({len(verdicts)} of {len(verdicts)} runs)"
    return None


def recheck(
    snippet: str, config: dict[str, Any], children: list[int], timeout_s: float, found: dict[str, Any], runs: int
) -> tuple[str, str]:
    """The culprit's bad and good configurations run again, each in a fresh process: its
    backend must still disagree, and the backend before it (or, within a backend, its
    workaround) still agree. ("confirmed" or "doubtful", what was run in words)."""
    backend = found["backend"]
    said = [f"the failure reproduced in {runs} of {runs} runs"]
    doubts = []

    def judged(backend_: str, config_: dict[str, Any]) -> bool | None:
        try:
            result = fresh_verdict(snippet, config_, children, timeout_s, backend=backend_)
        except StepTimedOut:
            return None
        return result if isinstance(result, bool) else False  # a raise fails it, as in a step

    if backend in BACKEND_ORDER and not found.get("subsystem"):
        bad = judged(backend, config)
        said.append(f"backend {backend} again: {_agreed(bad)}")
        if bad is not False:
            doubts.append(backend)
        index = BACKEND_ORDER.index(backend)
        if index > 0:
            good_backend = BACKEND_ORDER[index - 1]
            good = judged(good_backend, config)
            said.append(f"backend {good_backend} again: {_agreed(good)}")
            if good is not True:
                doubts.append(good_backend)
    elif found.get("workaround"):
        fixed = {**config, **found["workaround"].get("config", {})}
        good = judged("inductor", fixed)
        switches = ", ".join(f"{k}={v!r}" for k, v in found["workaround"].get("config", {}).items())
        said.append(f"inductor with {switches}: {_agreed(good)}")
        if good is not True:
            doubts.append("workaround")
    else:
        said.append(f"{backend} {found.get('subsystem') or ''}".rstrip() + ": no configuration of its own to re-run")
    return ("doubtful" if doubts else "confirmed"), "; ".join(said)


def _agreed(verdict_: bool | None) -> str:
    return {True: "agreed", False: "disagreed", None: "timed out"}[verdict_]
