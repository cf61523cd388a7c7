"""A run across ranks, from the template's side: N ranks forked from the one warm template,
each a run as any other (a fresh fork, its own eager reference), joined by torch.distributed
over the loopback; waited for together under the run's timeout, and their reports merged into
the run's one report (engine/ranks.py). Worker-side.

Rank 0 speaks its progress and early diagnostics on the channel as a one-process run does;
every rank sends its final report back to the template in a file of its own with no name
(readback.HeldReport: no other rank holds it, so none can rewrite another's), read once all have
ended. The groups meet in stores that are files in the group's folder (mkdtemp's: this user's
alone), never on a port, and gloo's sockets listen on the loopback only (run/ranks.py). A rank
still alive at the timeout is asked for its stack (SIGUSR2, which faulthandler answers even
inside a C++ wait), then every process of the group is killed. A rank whose program fails
(run/ranks.say_failed) has the other ranks stopped at once, each asked for its stack first, as
torchrun's agent stops a job's other workers when one fails; the run's error is the failed
rank's (rank_errors.py).

Under torchrun (engine.ranks.Launch: this playground is one process of torchrun's job) the group
here is the one rank torchrun gave this process, and its reference: the other ranks are the
job's other processes, on this machine or another, met in torchrun's store: the user's own
rendezvous, as open as torchrun made it. Each rank's report arrives through that store
(run/ranks.share_report), passed on in this rank's held report, and is merged here as a forked
rank's is.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import tempfile
import time
from dataclasses import replace
from typing import Any, Protocol

from playground.engine import ranks as rank_reports
from playground.engine.ranks import Launch
from playground.engine.report import Report, RunError
from playground.engine.snippet import snippet_line_in_stack
from playground.worker.process import procs
from playground.worker.process.channel import Channel
from playground.worker.process.child import Inherited, run_child
from playground.worker.process.rank_errors import collective_line, plain, run_error
from playground.worker.process.readback import HeldReport, read_regular
from playground.worker.process.reference_forks import Forked
from playground.worker.process.spare import Spare
from playground.worker.process.stragglers import Stragglers
from playground.worker.run import ranks
from playground.worker.run.spine.request import RankPlace, WorkerRequest


class Host(Protocol):
    """What a rank group needs of the template that runs it."""

    channel: Channel
    stragglers: Stragglers
    #: The template's requests (template.Requests): a cancel read while the ranks run.
    requests: Any
    spare: Spare

    def inherited(self, held: HeldReport | None = None, others: tuple[int, ...] = ()) -> Inherited: ...


#: How long a collective waits for the other ranks, as a share of the run's timeout (within
#: the bounds below): well inside it, so that a rank left waiting says where before the kill.
COLLECTIVE_SHARE = 0.25
MIN_COLLECTIVE_S, MAX_COLLECTIVE_S = 3.0, 60.0
#: Seconds a rank asked for its stack is given to write it.
STACK_GRACE_S = 0.3
#: How often the group's folder is looked at for a rank whose program failed (run/ranks.say_failed):
#: torchrun's agent looks at its workers as often by default (`--monitor-interval 0.1`).
MONITOR_S = 0.1


def collective_timeout(run_timeout: float | None) -> float:
    if run_timeout is None:
        return MAX_COLLECTIVE_S
    return min(max(COLLECTIVE_SHARE * run_timeout, MIN_COLLECTIVE_S), MAX_COLLECTIVE_S)


def free_ports(count: int) -> list[int]:
    """Loopback ports free now: MASTER_PORT for a program that makes its own group."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


class RankGroup:
    """The processes of one run across ranks, while it runs."""

    def __init__(self, template: Host, request: WorkerRequest, launch: Launch | None = None) -> None:
        self.template = template
        self.launch = launch
        if launch is not None and launch.world_size != request.run.settings.ranks:
            # torchrun's job is the run's ranks, whatever the snippet's SETTINGS say.
            request = request.with_run(prepared=replace(request.run.prepared, settings=_ranks_of(request, launch)))
        self.request = request
        self.world_size = launch.world_size if launch is not None else request.run.settings.ranks
        #: The ranks whose processes are ours: every rank, or torchrun's one for this process.
        self.local_ranks = [launch.rank] if launch is not None else list(range(self.world_size))
        self.folder = tempfile.mkdtemp(prefix="compile-playground-ranks-")
        self.children: list[int] = []
        self.references: list[Forked] = []
        #: Each local rank's report back (readback.py), by rank.
        self.held: dict[int, HeldReport] = {}
        #: The report messages that came back, by rank (under torchrun, the other ranks' too).
        self.messages: dict[int, dict[str, Any]] = {}
        #: The rank whose program failed first, and the ranks stopped for it (None: none failed).
        self.failed: int | None = None
        self.stopped: list[int] = []

    @property
    def pids(self) -> list[int]:
        return [*self.children, *(p for forked in self.references for p in forked.pids)]

    def run(self) -> tuple[str, dict[str, Any]]:
        """Every rank run and waited for; the merged report sent; the outcome and status."""
        request = self.request
        port, reference_port = free_ports(2)
        timeout = request.run.flags.timeout_s
        parent = os.getpid()
        requests = []
        for rank in self.local_ranks:
            place = RankPlace(
                rank, self.world_size, port, reference_port, self.folder, collective_timeout(timeout), self.launch
            )
            mine = replace(request, rank=place, held=True)
            forked = Forked(self.template.inherited(), mine)
            self.references.append(forked)
            requests.append(forked.request(mine))
        # The ranks forked last and together: they meet in the process group at once.
        for rank, mine in zip(self.local_ranks, requests, strict=True):
            # The first in the spare when one is warm (a one-process run would have had it).
            first = rank == self.local_ranks[0] and mine.run.program is None  # a program: glibc's malloc
            handed = self.template.spare.hand(mine) if first else None
            if handed is not None:
                pid, self.held[rank] = handed
            else:
                held = self.held[rank] = HeldReport()
                # Each rank holds its own report and none of the others' made before it.
                others = tuple(h.fd for r, h in self.held.items() if r != rank)
                pid = os.fork()
                if pid == 0:  # pragma: no cover - the rank's process
                    run_child(self.template.inherited(held, others), mine, parent)
            self.children.append(pid)
        killed_for, ended = self._wait(timeout)
        if self.failed is None:  # every rank ended before a failure was looked for
            self.failed = self._first_failed()
        for held in self.held.values():
            for rank, message in held.messages().items():
                self.messages.setdefault(rank, message)
        # A rank killed mid-write leaves half a line in the pipe: end it, the client skips it.
        self.template.channel.send_bytes(b"\n")
        if killed_for != "cancelled":
            report = self._merged(ended, killed_for)
            self.template.channel.send({"event": "report", "id": request.id, "report": report.to_dict()})
        outcome = killed_for or "ok"
        return outcome, {"pid": self.children[0], "ranks": [ended[rank] for rank in self.local_ranks]}

    def _path(self, rank: int, ext: str) -> str:
        return os.path.join(self.folder, f"rank{rank}.{ext}")

    def _wait(self, timeout: float | None) -> tuple[str, dict[int, dict[str, Any]]]:
        """Every local rank's end, its status by rank; why they were killed ("" when they ended)."""
        template = self.template
        deadline = None if timeout is None else time.monotonic() + timeout
        by_rank = dict(zip(self.local_ranks, self.children, strict=True))
        fds = {os.pidfd_open(pid): rank for rank, pid in by_rank.items()}
        ended: dict[int, dict[str, Any]] = {}
        killed_for = ""
        try:
            while len(ended) < len(self.children):
                open_fds = [fd for fd, rank in fds.items() if rank not in ended]
                watch = deadline
                if self.failed is None and len(by_rank) > 1:
                    soon = time.monotonic() + MONITOR_S
                    watch = soon if deadline is None else min(deadline, soon)
                readable = template.stragglers.select([template.channel.in_fd, *open_fds], watch)
                for fd in readable:
                    if fd in fds:
                        ended[fds[fd]] = _reap(by_rank[fds[fd]])
                if template.channel.in_fd in readable:
                    stop = False
                    for message in template.channel.read_available():
                        stop = template.requests.accept(message, running_id=self.request.id) or stop
                    if (stop or template.channel.eof) and not killed_for:
                        killed_for = "cancelled"
                        procs.kill_all(self.children)
                if self.failed is None and not killed_for:
                    self._stop_for_failed(by_rank, ended)
                if deadline is not None and time.monotonic() >= deadline and not killed_for:
                    killed_for = "timeout"
                    alive = [pid for rank, pid in by_rank.items() if rank not in ended]
                    procs.kill_all(alive, signal.SIGUSR2)  # each writes its stack (rank_child)
                    time.sleep(STACK_GRACE_S)
                    procs.kill_all(alive)
                    deadline = None
        finally:
            for fd in fds:
                os.close(fd)
        return killed_for, ended

    def _stop_for_failed(self, by_rank: dict[int, int], ended: dict[int, dict[str, Any]]) -> None:
        """As torchrun's agent does when a worker fails: once a rank says its program failed
        (run/ranks.say_failed), every other rank still running is stopped, asked for its stack
        first (where it was), and the failed rank is left to finish its report."""
        self.failed = self._first_failed()
        if self.failed is None:
            return
        self.stopped = [r for r in by_rank if r != self.failed and r not in ended]
        alive = [by_rank[r] for r in self.stopped]
        if alive:
            procs.kill_all(alive, signal.SIGUSR2)  # each writes its stack (child._as_rank)
            time.sleep(STACK_GRACE_S)
            procs.kill_all(alive)

    def _first_failed(self) -> int | None:
        """The local rank whose program failed first (its file's time), None when none did."""
        said = []
        for rank in self.local_ranks:
            with contextlib.suppress(OSError):
                said.append((os.lstat(ranks.failed_path(self.folder, rank)).st_mtime_ns, rank))
        return min(said)[1] if said else None

    def _merged(self, ended: dict[int, dict[str, Any]], killed_for: str) -> Report:
        """The run's report: each rank's own (or what its end says), merged, the collective
        trouble named at the top."""
        path = self.request.run.path
        reports = [
            self._stopped(rank, plain(self._rank_report(rank, ended.get(rank, {}), killed_for), path))
            for rank in range(self.world_size)
        ]
        # A rank that died before its report still ran the torch every other rank ran.
        version = next((r.torch_version for r in reports if r.torch_version), "")
        reports = [r if r.torch_version else replace(r, torch_version=version) for r in reports]
        trouble = run_error(reports, [self._stack_line(rank) for rank in range(len(reports))])
        merged = rank_reports.merged(reports)
        if trouble is not None:
            merged = replace(merged, error=trouble)
        if self.launch is None:
            notes = [f"ran in {self.world_size} processes joined by torch.distributed ({_backend(self.request)})"]
        else:
            notes = [
                f"ran as rank {self.launch.rank} of {self.world_size} in torchrun's job {self.launch.run_id!r} "
                f"({_backend(self.request)}); every rank's report came through torchrun's store"
            ]
        if self.request.run.passes.dynamo_code:
            notes.append("Dynamo's code is not shown for a run across ranks")
        return replace(merged, notes=(*notes, *merged.notes))

    def _stopped(self, rank: int, report: Report) -> Report:
        """A rank's report, its error the stop when a rank failed first and this one was stopped,
        or lost its peer in a collective (the failed rank's process had ended): torchrun would
        have stopped it as well. Its own error's words are kept in the error's detail."""
        error = report.error
        if self.failed is None or rank == self.failed or error is None or error.type == "RankStopped":
            return report
        lost = ranks.collective_trouble(error.message)
        if lost is None:
            return report
        where = f" at line {error.line}" if error.line else ""
        stop = RunError(
            kind="snippet",
            type="RankStopped",
            message=f"rank {rank} was stopped{where} because rank {self.failed} failed: it {lost}",
            line=error.line,
            detail=f"{error.type}: {error.message}\n{error.detail}".strip(),
        )
        return replace(report, error=stop)

    def _rank_report(self, rank: int, status: dict[str, Any], killed_for: str) -> Report:
        message = self.messages.get(rank)
        if message is not None and isinstance(message.get("report"), dict):
            with contextlib.suppress(ValueError, TypeError, AttributeError):
                return Report.from_dict(message["report"])
        settings, path = self.request.run.settings, self.request.run.path
        if rank not in self.local_ranks:
            error = RunError(
                kind="worker",
                type="RankMissing",
                message=(
                    f"rank {rank} sent no report through torchrun's store: its process (on another node, or "
                    "another of torchrun's processes here) ended, or was not done a collective timeout after this one"
                ),
            )
            return Report(settings=settings, snippet=path, error=error)
        line = self._stack_line(rank)
        where = f" at line {line}" if line else ""
        if rank in self.stopped:
            error = RunError(
                kind="snippet",
                type="RankStopped",
                message=f"rank {rank} was stopped{where} because rank {self.failed} failed",
                line=line,
            )
        elif killed_for == "timeout":
            error = RunError(
                kind="snippet",
                type="Timeout",
                message=f"rank {rank} was still running{where} at the run's timeout and was killed",
                line=line,
            )
        else:
            how = f"signal {status['signal']}" if status.get("signal") else f"exit status {status.get('returncode')}"
            error = RunError(kind="worker", type="RankDied", message=f"rank {rank} ended without a report ({how})")
        return Report(settings=settings, snippet=path, error=error)

    def _stack_line(self, rank: int) -> int | None:
        """The snippet's line on the stack rank `rank` wrote when asked (the innermost one)."""
        data = read_regular(self._path(rank, "stack"), 1 << 20)
        if data is None:
            return None
        path = self.request.run.path
        return collective_line(path, snippet_line_in_stack(data.decode("utf-8", "replace"), path))

    def close(self) -> None:
        procs.kill_all(self.pids)
        for pid in self.children:
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, 0)
        for forked in self.references:
            forked.close()
        for held in self.held.values():
            held.close()
        self.children, self.references, self.held = [], [], {}
        shutil.rmtree(self.folder, ignore_errors=True)


def _ranks_of(request: WorkerRequest, launch: Launch) -> Any:
    """The request's settings with torchrun's world size as its ranks (within Settings' bound)."""
    from playground.engine.settings import MAX_RANKS

    return replace(request.run.settings, ranks=min(launch.world_size, MAX_RANKS))


def _reap(pid: int) -> dict[str, Any]:
    try:
        _, wait_status = os.waitpid(pid, 0)
    except ChildProcessError:
        return {"pid": pid}
    if os.WIFSIGNALED(wait_status):
        return {"pid": pid, "signal": signal.Signals(os.WTERMSIG(wait_status)).name}
    return {"pid": pid, "returncode": os.WEXITSTATUS(wait_status)}


def _backend(request: WorkerRequest) -> str:
    return "nccl" if request.run.settings.device.startswith("cuda") else "gloo"
