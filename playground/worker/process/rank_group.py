"""A run across ranks, from the template's side: N ranks forked from the one warm template,
each a run as any other (a fresh fork, its own eager reference), joined by torch.distributed
over the loopback; waited for together under the run's timeout, and their reports merged into
the run's one report (engine/ranks.py). Worker-side.

Rank 0 speaks its progress and early diagnostics on the channel as a one-process run does;
every rank writes its final report to a file in the group's folder, which the template reads
once all have ended. A rank still alive at the timeout is asked for its stack (SIGUSR2, which
faulthandler answers even inside a C++ wait), then every process of the group is killed.

Under torchrun (engine.ranks.Launch: this playground is one process of torchrun's job) the group
here is the one rank torchrun gave this process, and its reference: the other ranks are the
job's other processes, on this machine or another, met in torchrun's store. Each rank's report
arrives through that store (run/ranks.share_report) into the same folder, and is merged here
as a forked rank's is.
"""

from __future__ import annotations

import contextlib
import json
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

    def inherited(self) -> Inherited: ...


#: How long a collective waits for the other ranks, as a share of the run's timeout (within
#: the bounds below): well inside it, so that a rank left waiting says where before the kill.
COLLECTIVE_SHARE = 0.25
MIN_COLLECTIVE_S, MAX_COLLECTIVE_S = 3.0, 60.0
#: Seconds a rank asked for its stack is given to write it.
STACK_GRACE_S = 0.3


def collective_timeout(run_timeout: float | None) -> float:
    if run_timeout is None:
        return MAX_COLLECTIVE_S
    return min(max(COLLECTIVE_SHARE * run_timeout, MIN_COLLECTIVE_S), MAX_COLLECTIVE_S)


def free_ports(count: int) -> list[int]:
    """Loopback ports free now (each rank 0 binds its group's store there at once)."""
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
            mine = replace(request, rank=place, report_to=self._path(rank, "json"))
            forked = Forked(self.template.inherited(), mine)
            self.references.append(forked)
            requests.append(forked.request(mine))
        # The ranks forked last and together: they meet in the process group at once.
        for index, mine in enumerate(requests):
            # The first in the spare when one is warm (a one-process run would have had it).
            pid = self.template.spare.hand(mine) if index == 0 else None
            if pid is None:
                pid = os.fork()
                if pid == 0:  # pragma: no cover - the rank's process
                    run_child(self.template.inherited(), mine, parent)
            self.children.append(pid)
        killed_for, ended = self._wait(timeout)
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
                readable = template.stragglers.select([template.channel.in_fd, *open_fds], deadline)
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

    def _merged(self, ended: dict[int, dict[str, Any]], killed_for: str) -> Report:
        """The run's report: each rank's own (or what its end says), merged, the collective
        trouble named at the top."""
        reports = [_plain(self._rank_report(rank, ended.get(rank, {}), killed_for)) for rank in range(self.world_size)]
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

    def _rank_report(self, rank: int, status: dict[str, Any], killed_for: str) -> Report:
        try:
            with open(self._path(rank, "json"), encoding="utf-8") as fh:
                message = json.load(fh)
            return Report.from_dict(message.get("report"))
        except (OSError, ValueError, AttributeError):
            pass
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
        if killed_for == "timeout":
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
        try:
            with open(self._path(rank, "stack"), encoding="utf-8", errors="replace") as fh:
                text = fh.read(1 << 20)
        except OSError:
            return None
        return snippet_line_in_stack(text, self.request.run.path)

    def close(self) -> None:
        procs.kill_all(self.pids)
        for pid in self.children:
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, 0)
        for forked in self.references:
            forked.close()
        self.children, self.references = [], []
        shutil.rmtree(self.folder, ignore_errors=True)


def _ranks_of(request: WorkerRequest, launch: Launch) -> Any:
    """The request's settings with torchrun's world size as its ranks (within Settings' bound)."""
    from playground.engine.settings import MAX_RANKS

    return replace(request.run.settings, ranks=min(launch.world_size, MAX_RANKS))


def _plain(report: Report) -> Report:
    """A rank's report with gloo's words in its error made plain (ranks.plain_gloo)."""
    error = report.error
    if error is None or ranks.collective_trouble(error.message) is None:
        return report
    # Left waiting by another rank: neither torch.compile's failure nor ours.
    return replace(report, error=replace(error, kind="snippet", message=ranks.plain_gloo(error.message)))


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


def _left_waiting(error: RunError) -> bool:
    """Whether a rank's error is another rank's doing: its collective lost its peers, or it was
    still running (waiting) when the run timed out."""
    return ranks.collective_trouble(error.message) is not None or error.type == "Timeout"


def run_error(reports: list[Report], stack_lines: list[int | None]) -> RunError | None:
    """The run's error (the top level's, over rank 0's own), None to keep rank 0's: the rank
    that failed on its own (raised, or died) when there is one, and which ranks it left
    waiting; else the collective the ranks fell out of step in (collective_error). Rank 0's
    own failure stays as it is unless it left other ranks waiting."""
    causes = [r for r, report in enumerate(reports) if report.error is not None and not _left_waiting(report.error)]
    if not causes:
        return collective_error(reports, stack_lines)
    # Under torchrun, a rank whose report never came says least: a rank here that failed on its
    # own is named first, and the missing ones after it.
    missing = [r for r in causes if _missing(reports[r])]
    if len(missing) < len(causes):
        causes = [r for r in causes if r not in missing]
    else:
        missing = []
    waiting = [
        (r, report.error)
        for r, report in enumerate(reports)
        if report.error is not None and r not in causes and r not in missing
    ]
    rank, error = causes[0], reports[causes[0]].error
    assert error is not None
    if rank == 0 and not waiting and not missing:
        return None
    lines = [e.line or stack_lines[r] for r, e in waiting]
    # The failing rank's own line; where the others waited is said in words. A rank of torchrun's
    # job whose report never came has no line of its own: where the others waited for it is the one.
    line = error.line or stack_lines[rank]
    if line is None and error.type == "RankMissing":
        line = next((x for x in lines if x), None)
    said = error.message if error.message.startswith(f"rank {rank} ") else f"rank {rank}: {error.message}"
    if len(causes) > 1:
        said += f"; {_ranks(causes[1:])} failed too"
    if missing:
        said += f"; {_ranks(missing)} sent no report through torchrun's store"
    in_collective = [r for r, e in waiting if e.type != "Timeout"]
    if in_collective:
        at = sorted({x for (r, _), x in zip(waiting, lines, strict=True) if x and r in in_collective})
        where = f" at line {', '.join(map(str, at))}" if at else ""
        said += f"; {_ranks(in_collective)} {_was(in_collective)} left waiting in a collective{where}"
    timed_out = [r for r, e in waiting if e.type == "Timeout"]
    if timed_out:
        said += f"; {_ranks(timed_out)} {_was(timed_out)} still running when the run timed out"
    if error.type == "RankDied" and "SIGABRT" in error.message and in_collective:
        # gloo's own check on a message's length ends the process (an uncaught C++ exception,
        # std::terminate) when ranks send the same collective different sizes.
        return RunError(
            kind="snippet",
            type="CollectiveMismatch",
            message=(
                f"the ranks fell out of step: {said}. gloo aborts a rank whose peer sends a "
                "collective of another size: check that every rank passes the same shape"
            ),
            line=line or next((x for x in lines if x), None),
            detail=error.detail,
        )
    return replace(error, message=said, line=line)


def _missing(report: Report) -> bool:
    return report.error is not None and report.error.type == "RankMissing"


def _was(ranks_: list[int]) -> str:
    return "was" if len(ranks_) == 1 else "were"


def collective_error(reports: list[Report], stack_lines: list[int | None]) -> RunError | None:
    """The run's error when ranks fell out of step in a collective: which ranks waited, on
    which line of the snippet, and that the others never got there; None when no rank did.
    A rank whose wait names no snippet line was left waiting elsewhere (in a later collective,
    or in the run's own agreements) by a rank that went another way."""
    waited: list[tuple[int, int | None]] = []  # its wait in a collective timed out
    stuck: list[tuple[int, int | None]] = []  # killed at the run's timeout, where its stack was
    for rank, report in enumerate(reports):
        error = report.error
        if error is None:
            continue
        if ranks.collective_trouble(error.message) is not None:
            waited.append((rank, error.line))
        elif error.type == "Timeout":
            stuck.append((rank, error.line or stack_lines[rank]))
    if not waited and not stuck:
        return None
    if stuck:
        said = "; ".join(f"rank {r} was still running{_at(line)} when the run timed out" for r, line in stuck)
        if waited:
            said += f"; {_ranks([r for r, _ in waited])} waited for it in a collective until its wait timed out"
        first = next((line for _, line in stuck if line), None)
    elif any(line for _, line in waited):
        who = sorted({r for r, line in waited if line})
        others = [r for r in range(len(reports)) if r not in who]
        lines = sorted({line for _, line in waited if line})
        said = (
            f"{_ranks(who)} made a collective at line {', '.join(map(str, lines))} that "
            f"{_ranks(others) if others else 'the other ranks'} never reached"
        )
        first = lines[0]
    else:
        said = f"{_ranks([r for r, _ in waited])} waited in a collective that the other ranks never reached"
        first = None
    return RunError(
        kind="snippet",
        type="CollectiveMismatch",
        message=f"the ranks fell out of step: {said}",
        line=first,
        detail="\n".join(r.error.detail for r in reports if r.error is not None and r.error.detail)[-6000:],
    )


def _at(line: int | None) -> str:
    return f" at line {line}" if line else ""


def _ranks(ranks_: list[int]) -> str:
    if len(ranks_) == 1:
        return f"rank {ranks_[0]}"
    return "ranks " + ", ".join(map(str, ranks_[:-1])) + f" and {ranks_[-1]}"
