"""Fixes tried, from the template's side: the run itself (its report held in a file, then sent),
then one variant per remedy (run/fixes/), each a run's child forked from here with its own
eager reference, several side by side within the cores and memory (`lane_count`). Each
variant's child is muted and writes its report to a file; the template reads it into a `Fix`
and sends it as a "fix" event as soon as it ends, then one "fixes" event with them all, best
first, and the targets no remedy removed. A cancel of the run kills every variant. Worker-side.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, Protocol

from playground.engine.events import Progress
from playground.engine.report import Fix, Report
from playground.engine.report.fixes import ordered
from playground.worker.process import limits, procs
from playground.worker.process.channel import Channel
from playground.worker.process.child import Inherited, run_child
from playground.worker.process.reference_forks import Forked
from playground.worker.process.stragglers import Stragglers
from playground.worker.run.fixes.candidates import Candidate, propose
from playground.worker.run.fixes.variant import reference_request, variant_request
from playground.worker.run.fixes.verdict import advice, fix_of
from playground.worker.run.spine.request import WorkerRequest


class Host(Protocol):
    """What the fixes need of the template that runs them."""

    channel: Channel
    stragglers: Stragglers
    #: The template's requests (template.Requests): a cancel read while the variants run.
    requests: Any
    #: The base run's reference processes, where the template's shutdown finds them.
    references: Forked | None

    def inherited(self) -> Inherited: ...


LANES_ENV = "COMPILE_PLAYGROUND_FIX_LANES"
#: What one variant holds at its peak (its child, its eager reference, the idle float64 one), MiB.
VARIANT_MIB = 600


def lane_count() -> int:
    """Variants side by side: one per two cores (a variant's child and its eager reference run
    at once), as many as memory above the host's floor holds, at most 8; COMPILE_PLAYGROUND_FIX_LANES
    sets it."""
    raw = os.environ.get(LANES_ENV, "").strip()
    if raw.isdigit() and 1 <= int(raw) <= 64:
        return int(raw)
    try:
        cores = len(os.sched_getaffinity(0))
    except OSError:
        cores = os.cpu_count() or 1
    lanes = max(1, cores // 2)
    available = limits.available_mib()
    if available is not None:
        lanes = min(lanes, max(1, (available - limits.MIN_FREE_MIB // 2) // VARIANT_MIB))
    return max(1, min(lanes, 8))


def asked(request: WorkerRequest, isolated: bool) -> bool:
    """Whether the run tries fixes: asked for, on a snippet (not a program, not across ranks), in
    a worker that forks its runs."""
    run = request.run
    return bool(run.passes.fixes) and isolated and run.program is None and run.settings.ranks <= 1


@dataclass
class _Variant:
    """One variant in flight."""

    candidates: list[Candidate]
    request: WorkerRequest
    references: Forked
    pid: int
    pidfd: int
    started: float
    deadline: float | None


class FixLanes:
    """One run that tries fixes, from its base run to its last variant."""

    def __init__(
        self, template: Host, request: WorkerRequest, first: Callable[[WorkerRequest], tuple[str, dict[str, Any]]]
    ) -> None:
        self.template = template
        #: The template's way to run a run's child (the spare when one is warm), waited for.
        self.first = first
        #: The run as the client signed it (its child's messages carry the key), and without the key.
        self.signed = request
        self.request = request.unsigned()
        self.folder = tempfile.mkdtemp(prefix="compile-playground-fixes-")
        self.running: list[_Variant] = []

    @property
    def pids(self) -> list[int]:
        return [p for v in self.running for p in (v.pid, *v.references.pids)]

    def run(self) -> tuple[str, dict[str, Any]]:
        """The base run, then the variants; the base run's outcome and status."""
        try:
            outcome, status = self._base()
            if outcome != "ok":
                return outcome, status
            held = _read(os.path.join(self.folder, "base.json"))
            if held is None:
                return outcome, status
            self.template.channel.send(held)
            base = Report.from_dict(held["report"])
            if base.error is not None and base.error.kind in ("settings", "load", "syntax"):
                return outcome, status
            cancelled = self._variants(base)
            return ("cancelled", status) if cancelled else (outcome, status)
        finally:
            self.close()

    def _base(self) -> tuple[str, dict[str, Any]]:
        template = self.template
        run = replace(self.signed, report_to=os.path.join(self.folder, "base.json"))
        template.references = Forked(template.inherited(), self.request)
        try:
            return self.first(template.references.request(run))
        finally:
            template.references.close()
            template.references = None

    def _variants(self, base: Report) -> bool:
        """Every variant, `lane_count` at a time; True when the run was cancelled."""
        proposal = propose(base, self.request.run.text, self.request.run.passes.fixes)
        groups: dict[Any, list[Candidate]] = {}
        for candidate in proposal.candidates:
            groups.setdefault(candidate.application(), []).append(candidate)
        waiting = list(groups.values())
        lanes = lane_count()
        self._progress(f"trying {len(proposal.candidates)} remedies in {len(waiting)} variant runs, {lanes} at a time")
        fixes: list[Fix] = []
        number = 0
        while waiting or self.running:
            while waiting and len(self.running) < lanes:
                number += 1
                self.running.append(self._start(waiting.pop(0), number))
            ended = self._wait()
            if ended is None:
                return True
            fixes += self._finish(ended, base)
        done = ordered(fixes)
        message = {
            "event": "fixes",
            "id": self.request.id,
            "fixes": [f.to_dict() for f in done],
            "fix_advice": [a.to_dict() for a in advice(proposal.rewrites, done)],
        }
        self.template.channel.send(message)
        return False

    def _start(self, candidates: list[Candidate], number: int) -> _Variant:
        template = self.template
        request = variant_request(self.request, candidates[0], number, os.path.join(self.folder, f"fix{number}.json"))
        references = Forked(template.inherited(), reference_request(self.request, request))
        child = references.request(request)
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the variant's child: muted, its report in its file
            inherited = template.inherited()
            inherited.channel.mute()
            run_child(inherited, child, parent)
        timeout = request.run.flags.timeout_s
        now = time.monotonic()
        return _Variant(
            candidates, request, references, pid, os.pidfd_open(pid), now, now + timeout if timeout else None
        )

    def _wait(self) -> _Variant | None:
        """The next variant to end (killed at its timeout); None when the run was cancelled."""
        template = self.template
        channel = template.channel
        while True:
            deadlines = [v.deadline for v in self.running if v.deadline is not None]
            fds = [channel.in_fd, *(v.pidfd for v in self.running)]
            readable = template.stragglers.select(fds, min(deadlines) if deadlines else None)
            if channel.in_fd in readable:
                stop = False
                for message in channel.read_available():
                    stop = template.requests.accept(message, running_id=self.request.id) or stop
                if stop or channel.eof:
                    return None
            for variant in self.running:
                if variant.pidfd in readable:
                    return variant
                if variant.deadline is not None and time.monotonic() >= variant.deadline:
                    procs.kill_all([variant.pid])
                    variant.deadline = None

    def _finish(self, variant: _Variant, base: Report) -> list[Fix]:
        self.running.remove(variant)
        os.close(variant.pidfd)
        outcome, status = procs.ended(variant.pid, "timeout" if variant.deadline is None else "")
        variant.references.close()
        seconds = time.monotonic() - variant.started
        held = _read(variant.request.report_to)
        after = Report.from_dict(held["report"]) if held is not None else None
        ended = outcome if "signal" not in status else f"{outcome}, {status['signal']}"
        fixes = [fix_of(c, base, after, ended, seconds) for c in variant.candidates]
        for fix in fixes:
            self.template.channel.send({"event": "fix", "id": self.request.id, "fix": fix.to_dict()})
        return fixes

    def _progress(self, words: str) -> None:
        self.template.channel.send(Progress(phase="fixes", message=words, run_id=self.request.id).to_dict())

    def close(self) -> None:
        procs.kill_all(self.pids)
        for variant in self.running:
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(variant.pid, 0)
            with contextlib.suppress(OSError):
                os.close(variant.pidfd)
            variant.references.close()
        self.running = []
        shutil.rmtree(self.folder, ignore_errors=True)


def _read(path: str) -> dict[str, Any] | None:
    try:
        with open(path, encoding="utf-8") as fh:
            message = json.load(fh)
    except (OSError, ValueError):
        return None
    return message if isinstance(message, dict) and isinstance(message.get("report"), dict) else None
