"""One "run" message from the client as a frozen value, read once where the template reads it.

The message is the client's `RunRequest` (playground/engine/run_request.py) with the client's
own fields around it (the run's id and key); the worker reads the request with its one codec
and wraps it with what is the worker's. The template, the run's child, the reference processes
and the code child all read this one value; what the template adds for its children (where to
write instead of the channel, the reference processes) is a typed field, never a key grown on a
dict. Worker-side, torch-free.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from playground.engine.channel import RUN_KEY
from playground.engine.ranks import Launch
from playground.engine.run_request import DEFAULT_MIN_RUN_TIME_S, RunRequest, UnreadableSettings

#: The longest run timeout the worker accepts (faulthandler's timer overflows on inf or 1e12).
MAX_TIMEOUT_S = 7 * 24 * 3600.0


#: A reference's pid not known when the run was handed its request: the template forks the
#: references just after the handover (process/reference_forks.py) and writes their pids to
#: `PIDS_FILE` in the folder, which the run reads when it first needs them (`resolved`).
PENDING = -2
PIDS_FILE = "pids.json"


@dataclass(frozen=True)
class ReferenceProcesses:
    """The run's two reference processes, as the template forked them (reference.py): the
    folder they write in and their pids; and the findings lane's, when the run has one."""

    folder: str
    eager: int
    float64: int
    #: The findings lane (process/findings_lane.py), which starts before the eager one; -1: none.
    findings: int = -1

    @property
    def pending(self) -> bool:
        return PENDING in (self.eager, self.float64, self.findings)

    def resolved(self, timeout_s: float = 30.0) -> ReferenceProcesses:
        """These processes with their pids, once the template has written them (waited for up
        to `timeout_s`: the forks take milliseconds; a template that died took this process
        with it). Past it, or unreadable: none of them (-1), which the run reports as a
        reference that never ran."""
        if not self.pending:
            return self
        deadline = time.monotonic() + timeout_s
        while True:
            now = self.resolved_now()
            if now is not None:
                return now
            if time.monotonic() > deadline:
                return replace(self, eager=-1, float64=-1, findings=-1)
            time.sleep(0.001)

    def resolved_now(self) -> ReferenceProcesses | None:
        """These processes with their pids if the template has written them, without waiting:
        None while it has not. Unreadable: none of them (-1), as `resolved` says."""
        if not self.pending:
            return self
        try:
            with open(os.path.join(self.folder, PIDS_FILE), encoding="utf-8") as fh:
                pids = json.load(fh)
            return replace(
                self,
                eager=_pid(pids.get("eager")),
                float64=_pid(pids.get("float64")),
                findings=_pid(pids.get("findings")),
            )
        except FileNotFoundError:
            return None
        except (OSError, ValueError, AttributeError):
            return replace(self, eager=-1, float64=-1, findings=-1)


def _pid(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else -1


@dataclass(frozen=True)
class RankPlace:
    """One process's place in a run across ranks (Settings.ranks > 1), as the template gave it:
    its rank among `world_size`, the loopback ports a program's own group is told of
    (MASTER_PORT: the compiled runs', the eager references'), the group's private folder (where
    our groups' stores are files, and each rank's stack), and how long a collective may wait for
    the others before torch.distributed gives up. Under torchrun (`launch`), the groups meet in
    torchrun's store instead, and the other ranks' processes are the job's, on this machine or
    another."""

    rank: int
    world_size: int
    port: int
    reference_port: int
    folder: str
    collective_timeout_s: float
    launch: Launch | None = None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RankPlace:
        launch = data.get("launch")
        return cls(**{**data, "launch": Launch.from_dict(launch) if isinstance(launch, Mapping) else None})


@dataclass(frozen=True)
class WorkerRequest:
    """One "run" message from the client, and what the template adds for its children."""

    #: The run as the client asked for it. Its path is absolute, its timeout (flags.timeout_s)
    #: finite and positive or None for none, its min_run_time finite.
    run: RunRequest
    id: Any = 0
    #: Why the message's settings could not be read ("" when they could): the run reports it,
    #: its settings the defaults meanwhile. (switches.problem names a bad config value.)
    settings_problem: str = ""
    #: The template's own warm-up run: no sys.path change, no imports tracked.
    warmup: bool = False
    #: The key the client signs this run's messages with; the channel keeps it, and the request
    #: the run sees never holds it (the snippet can read its process's memory).
    key: str | None = field(default=None, repr=False)
    #: Set by the template only: the run's child sends its report down its own pipe to the
    #: template (process/readback.py) instead of to the client: a run that asked for Dynamo's
    #: code, and each rank of a run across ranks.
    held: bool = False
    references: ReferenceProcesses | None = None
    #: Set by the template only: this process's place in a run across ranks (None: one process).
    rank: RankPlace | None = None
    #: time.monotonic() when the client sent the request, and when the template read it (the
    #: save's waterfall: run/spine/waterfall.py); None when not known.
    sent_mono: float | None = None
    received_mono: float | None = None

    @classmethod
    def from_message(cls, message: Mapping[str, Any]) -> WorkerRequest:
        """The request a message carries: the client's request read with its codec (a missing
        key takes its default), settings that do not read named in `settings_problem`."""
        problem = str(message.get("settings_problem") or "")
        try:
            run = RunRequest.from_dict(message)
        except UnreadableSettings as exc:
            run = RunRequest.from_dict({**message, "settings": None})
            problem = f"the request's settings could not be read: {exc}"
        references = message.get("references")
        rank = message.get("rank")
        key = message.get(RUN_KEY)
        return cls(
            run=_sane(run),
            id=message.get("id", 0),
            settings_problem=problem,
            warmup=bool(message.get("warmup")),
            key=key if isinstance(key, str) else None,
            held=message.get("held") is True,
            references=ReferenceProcesses(**references) if isinstance(references, Mapping) else None,
            rank=RankPlace.from_dict(rank) if isinstance(rank, Mapping) else None,
            sent_mono=_mono(message.get("sent_mono")),
            received_mono=_mono(message.get("received_mono")),
        )

    def to_message(self) -> dict[str, Any]:
        """The request as JSON for a pipe between the worker's own processes (the spare child's,
        a restarted template's): from_message reads it back whole, its settings and key included."""
        return {
            "op": "run",
            **self.run.to_dict(),
            "id": self.id,
            "settings_problem": self.settings_problem,
            "warmup": self.warmup,
            RUN_KEY: self.key,
            "held": self.held,
            "references": asdict(self.references) if self.references is not None else None,
            "rank": asdict(self.rank) if self.rank is not None else None,
            "sent_mono": self.sent_mono,
            "received_mono": self.received_mono,
        }

    def unsigned(self) -> WorkerRequest:
        """This request without the client's key: what a run is handed."""
        return replace(self, key=None)

    def with_run(self, **changes: Any) -> WorkerRequest:
        """This request, its run changed (`RunRequest`'s fields: e.g. flags, trace)."""
        return replace(self, run=replace(self.run, **changes))


def _sane(run: RunRequest) -> RunRequest:
    """The run as the worker can use it: its path absolute, its timeout None or within
    MAX_TIMEOUT_S, its min_run_time a finite number."""
    path = run.path
    if path and not os.path.isabs(path):
        absolute = os.path.abspath(path)
        source = run.prepared.source
        run = replace(
            run,
            prepared=replace(
                run.prepared, path=absolute, source=replace(source, path=absolute) if source is not None else None
            ),
        )
    flags = run.flags
    sane = replace(
        flags, min_run_time=_number(flags.min_run_time, DEFAULT_MIN_RUN_TIME_S), timeout_s=_timeout(flags.timeout_s)
    )
    return run if sane == flags else replace(run, flags=sane)


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


def _mono(value: Any) -> float | None:
    """A monotonic time from a message, None when it is not a finite number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None
