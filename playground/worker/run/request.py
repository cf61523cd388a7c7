"""One "run" message from the client as a frozen value, read once where the template reads it.

The template, the run's child, the reference processes and the code child all read this one
value; what the template adds for its children (where to write instead of the channel, the
reference processes) is a typed field, never a key grown on a dict. Worker-side, torch-free.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from playground.engine.channel import RUN_KEY
from playground.engine.settings import Settings

#: The longest run timeout the worker accepts (faulthandler's timer overflows on inf or 1e12).
MAX_TIMEOUT_S = 7 * 24 * 3600.0


@dataclass(frozen=True)
class ReferenceProcesses:
    """The run's two reference processes, as the template forked them (reference.py): the
    folder they write in and their pids."""

    folder: str
    eager: int
    float64: int


@dataclass(frozen=True)
class WorkerRequest:
    """One "run" message from the client, and what the template adds for its children."""

    id: Any = 0
    path: str = ""
    source: str = ""
    #: The settings as the client resolved them, read back with the one codec: the worker
    #: never rebuilds defaults of its own. (switches.problem names a bad config value.)
    settings: Settings = field(default_factory=Settings)
    #: Why the message's settings could not be read ("" when they could): the run reports it.
    settings_problem: str = ""
    timing: bool = True
    min_run_time: float = 0.2
    trace: bool = False
    #: The template's own warm-up run: no sys.path change, no imports tracked.
    warmup: bool = False
    #: The run's timeout in seconds, None for none (always finite and positive).
    timeout_s: float | None = None
    #: A one-shot check: no next run to prepare a child or libraries for.
    last: bool = False
    dynamo_code: bool = False
    #: Profile Inductor's kernels after the timing (kernels_profile.py).
    kernels: bool = False
    #: Measure what a guard filter or skip_guard_eval_unsafe would save, after the timing
    #: (guard_what_if.py): a recompile of the target under the filter.
    guard_what_if: bool = False
    #: The key the client signs this run's messages with; the channel keeps it, and the request
    #: the run sees never holds it (the snippet can read its process's memory).
    key: str | None = field(default=None, repr=False)
    #: Set by the template only. Where the run's child writes its report instead of sending it
    #: (a run that asked for Dynamo's code), and where the code child writes what it found.
    report_to: str = ""
    code_to: str = ""
    references: ReferenceProcesses | None = None

    @classmethod
    def from_message(cls, message: Mapping[str, Any]) -> WorkerRequest:
        """The request a message carries; lenient: a missing key takes its default, and
        settings that do not read are named in `settings_problem`."""
        problem = ""
        try:
            settings = Settings.from_dict(message.get("settings"))
        except (TypeError, ValueError) as exc:
            settings, problem = Settings(), f"the request's settings could not be read: {exc}"
        references = message.get("references")
        key = message.get(RUN_KEY)
        path = message.get("path")
        return cls(
            id=message.get("id", 0),
            path=os.path.abspath(path) if isinstance(path, str) and path else "",
            source=str(message.get("source") or ""),
            settings=settings,
            settings_problem=problem,
            timing=bool(message.get("timing", True)),
            min_run_time=_number(message.get("min_run_time"), 0.2),
            trace=bool(message.get("trace")),
            warmup=bool(message.get("warmup")),
            timeout_s=_timeout(message.get("timeout_s")),
            last=bool(message.get("last")),
            dynamo_code=bool(message.get("dynamo_code")),
            kernels=bool(message.get("kernels")),
            guard_what_if=bool(message.get("guard_what_if")),
            key=key if isinstance(key, str) else None,
            report_to=str(message.get("report_to") or ""),
            code_to=str(message.get("code_to") or ""),
            references=ReferenceProcesses(**references) if isinstance(references, Mapping) else None,
        )

    def to_message(self) -> dict[str, Any]:
        """The request as JSON for a pipe between the worker's own processes (the spare child's,
        a restarted template's): from_message reads it back whole, its settings and key included."""
        message = asdict(self)
        message["settings"] = self.settings.to_dict()
        message[RUN_KEY] = message.pop("key")
        return {"op": "run", **message}

    def unsigned(self) -> WorkerRequest:
        """This request without the client's key: what a run is handed."""
        return replace(self, key=None)


def _number(value: Any, default: float) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return default
    return number if math.isfinite(number) else default


def _timeout(value: Any) -> float | None:
    """The request's timeout as a sane float, None for no timeout."""
    try:
        seconds = float(value or 0)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(seconds) or seconds <= 0:
        return None
    return min(seconds, MAX_TIMEOUT_S)
