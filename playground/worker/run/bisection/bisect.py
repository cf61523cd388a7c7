"""A bisection: torch's compiler bisector with the playground's verdict as its test. This module
is the driver, the process a front end starts.

Run as `python -m playground.worker.run.bisection.bisect SNIPPET [--config KEY=JSON]...`; it writes
JSON lines on stdout (its channel): `progress` events (`BisectProgress`), then one `result`, or
one `error`. The bisector's own prints go elsewhere. Each step of the bisection is a fresh
process, forked from this driver (which has imported torch and done Inductor's start-up, its
imports and C++ probes, but never run an op: compat.start_inductor), that loads the snippet,
calls it eagerly and compiled with Inductor, and compares values and gradients with the
snippet's tolerance (`verdict.py`; the forks are `forks.py`). The first verdict is judged again
before any step and the culprit's configurations after (`rechecks.py`); the search is
`search.py`, and what the culprit names, its workaround and its line, `culprit.py`.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
from dataclasses import dataclass, field
from typing import Any

from playground.engine.events import BisectProgress
from playground.worker.run.bisection import bisect_snippet
from playground.worker.run.bisection.culprit import op_name, workaround
from playground.worker.run.bisection.forks import STEP_TIMEOUT_S, StepStopped, fresh_diverging, fresh_line
from playground.worker.run.bisection.rechecks import first_verdicts, nothing_to_bisect, recheck
from playground.worker.run.bisection.search import search


@dataclass(frozen=True)
class Arguments:
    """The command line: the snippet, each `--config KEY=JSON`, each `--setting KEY=JSON` (over
    the snippet's SETTINGS), `--timeout S` for one step, `--parent PID` (the front end)."""

    snippet: str
    config: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    timeout_s: float = STEP_TIMEOUT_S
    parent: int = 0

    @classmethod
    def parse(cls, argv: list[str]) -> Arguments:
        config: dict[str, Any] = {}
        settings: dict[str, Any] = {}
        timeout_s, parent = STEP_TIMEOUT_S, os.getppid()
        for i, arg in enumerate(argv):
            if arg in ("--config", "--setting"):
                key, _, raw = argv[i + 1].partition("=")
                (config if arg == "--config" else settings)[key] = json.loads(raw)
            elif arg == "--timeout":
                timeout_s = float(argv[i + 1])
            elif arg == "--parent":
                parent = int(argv[i + 1])
        return cls(argv[0], config, settings, timeout_s, parent)


class Channel:
    """The JSON lines to the front end, on what was stdout: the bisector prints to stdout (its
    cleanup too, after the redirect in compat), and so may the snippet, so from here on fd 1 is
    /dev/null, never our channel nor the user's terminal."""

    def __init__(self) -> None:
        self._out = os.fdopen(os.dup(1), "w", buffering=1)
        os.dup2(os.open(os.devnull, os.O_WRONLY), 1)

    def _send(self, message: dict[str, Any]) -> None:
        self._out.write(json.dumps(message) + "\n")

    def progress(self, progress: BisectProgress) -> None:
        self._send(progress.to_dict())

    def error(self, phase: str, message: str) -> None:
        self._send({"event": "error", "phase": phase, "message": message})

    def no_culprit(self, reason: str, steps: int) -> None:
        self._send({"event": "result", "bisection": None, "reason": reason, "steps": steps})

    def culprit(self, found: dict[str, Any]) -> None:
        self._send({"event": "result", "bisection": found})


def _stop_with_us(children: list[int], made: list[str], parent: int) -> None:
    """SIGINT and SIGTERM kill every step's process and remove what was made; so does the front
    end's death, by the kernel's parent-death signal (a front end killed outright, SIGKILL or a
    closed terminal, signals nothing, and this process is in a group of its own)."""

    def stop(signum: int, _frame: Any) -> None:
        for pid in list(children):
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except OSError:
                pass
        for path in made:
            shutil.rmtree(path, ignore_errors=True)
        os._exit(128 + signum)

    signal.signal(signal.SIGINT, stop)
    signal.signal(signal.SIGTERM, stop)
    _on_parent_death(signal.SIGTERM)
    if os.getppid() != parent:  # it went before the kernel could be asked
        stop(signal.SIGTERM, None)


def _on_parent_death(sig: int) -> None:
    """prctl(PR_SET_PDEATHSIG, sig) for this process (Linux; elsewhere nothing)."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, int(sig), 0, 0, 0)  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _checked(args: Arguments) -> dict[str, Any]:
    """--config checked against torch, each key as `module.name`, and the settings applied to
    every step; StepStopped ("settings") for either's own problem, said before anything runs."""
    from playground.worker.run.spine.switches import SwitchError, checked_config

    try:
        config = {f"{module}.{name}": value for module, name, value in checked_config(args.config)}
    except SwitchError as exc:
        raise StepStopped("settings", str(exc)) from exc
    unknown = sorted(set(args.settings) - set(bisect_snippet.SETTING_KEYS))
    if unknown:
        keys = ", ".join(bisect_snippet.SETTING_KEYS)
        raise StepStopped("settings", f"no setting {unknown[0]!r} for a bisection ({keys})")
    bisect_snippet.OVERRIDES.update(args.settings)
    return config


def _named(
    args: Arguments, config: dict[str, Any], children: list[int], found: dict[str, Any], steps: int, runs: int
) -> dict[str, Any]:
    """The bisector's culprit with what it names: the snippet line of its op, its workaround,
    the steps, how its configurations fared again (`confidence`, `recheck`; the failure
    reproduced in `runs` of `runs` first runs), and the first diverging op."""
    op = op_name(found["debug_info"])
    found["line"] = fresh_line(args.snippet, config, op, children) if op else None
    found["workaround"] = workaround(found["backend"], found["subsystem"], found["debug_info"])
    found["steps"] = steps
    found["confidence"], found["recheck"] = recheck(args.snippet, config, children, args.timeout_s, found, runs)
    found["first_diverging_op"] = fresh_diverging(args.snippet, config, children)
    return found


def _warm() -> None:
    """Inductor's start-up done here once, for every step to inherit (compat.start_inductor: no
    op runs), and this process's heap hidden from the garbage collector, so that a step's
    collections do not copy it page by page (as the warm worker's template does)."""
    import gc

    from playground.worker import compat

    compat.start_inductor()
    gc.collect()
    gc.freeze()


def main(argv: list[str]) -> int:
    args = Arguments.parse(argv)
    channel = Channel()
    children: list[int] = []
    made: list[str] = []
    _stop_with_us(children, made, args.parent)
    try:
        config = _checked(args)
        _warm()
        # The same settings again: a verdict that changes between identical runs is no culprit's.
        verdicts = first_verdicts(args.snippet, config, children, args.timeout_s)
        reason = nothing_to_bisect(verdicts)
        if reason is not None:
            channel.no_culprit(reason, len(verdicts))
            return 0
        found, steps = search(args.snippet, config, children, made, args.timeout_s, channel.progress)
    except StepStopped as exc:
        channel.error(exc.phase, exc.message)
        return 0
    if found is None:
        channel.no_culprit("the failure did not reproduce under the bisector", steps)
    else:
        channel.culprit(_named(args, config, children, found, steps, len(verdicts)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
