"""The template process: it imports torch once, warms it, and serves the client's requests by
forking a child per run (child.py), a spare one ahead of time (spare.py). Worker-side."""

from __future__ import annotations

import contextlib
import gc
import os
import sys
import time
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Any, TextIO

from playground.engine import findings
from playground.engine.events import RunEnded
from playground.engine.hello import WorkerHello
from playground.engine.ranks import launch_of
from playground.worker.dynamo_code.held_report import CodeRun
from playground.worker.process import fix_lanes, inductor_warmup, preimport, procs, reexec, warmup, warmup_model
from playground.worker.process.channel import Channel
from playground.worker.process.child import Inherited, code_child, dump_after, rss_mb, run_child, run_here
from playground.worker.process.rank_group import RankGroup
from playground.worker.process.readback import HeldReport
from playground.worker.process.reference_forks import Forked
from playground.worker.process.spare import Spare
from playground.worker.process.stragglers import Stragglers
from playground.worker.run.spine.request import WorkerRequest


class Requests:
    """The requests waiting for their turn, as the client's messages file them."""

    def __init__(self) -> None:
        self.pending: deque[WorkerRequest] = deque()
        #: The client asked the worker to end: no request waiting is run.
        self.shutdown = False

    def accept(self, message: dict[str, Any], running_id: Any) -> bool:
        """File one message from the client; True when it asks to stop the running child. A
        run's message is read here, once, into the request every process of the run is given."""
        op = message.get("op")
        if op == "run":
            request = WorkerRequest.from_message(message)
            self.pending.append(replace(request, received_mono=time.monotonic()))
        elif op == "shutdown":
            self.shutdown = True
            return True
        elif op == "cancel":
            if running_id is not None and message.get("id") == running_id:
                return True
            self.pending = deque(r for r in self.pending if r.id != message.get("id"))
        return False


class Template:
    """The process that serves runs: it imports torch, warms it, and forks a child per run."""

    def __init__(self, channel: Channel, crash_log: TextIO) -> None:
        self.channel = channel
        self.crash_log = crash_log
        self.requests = Requests()
        self.inductor_warm = False
        #: Whether this process has run Inductor (a warm-up, or a run without isolation): a run's
        #: first use pays one-time costs (imports, the C++ toolchain check, loading compiled
        #: modules) that a cache hit does not remove, and its timings say so.
        self.inductor_started = False
        self.child: int | None = None
        self.spare = Spare()
        #: The run's reference processes (run/compare/reference.py), while it runs.
        self.references: Forked | None = None
        #: The run across ranks in progress (rank_group.py), while it runs.
        self.group: RankGroup | None = None
        #: The run trying fixes (fix_lanes.py), while its variants run.
        self.lanes: fix_lanes.FixLanes | None = None
        self.stragglers = Stragglers(lambda: {p for p in (self.child, self.spare.pid, *self._reference_pids()) if p})
        #: COMPILE_PLAYGROUND_ISOLATION=none runs in the template: to measure isolation (runs leak).
        self.isolated = os.environ.get("COMPILE_PLAYGROUND_ISOLATION", "fork") != "none"
        #: The job torchrun launched us in (None: none): every run is then this process's rank of it.
        self.launch = launch_of(os.environ)
        #: The code and settings compiled here: a save of the same code gets no findings lane.
        self.compiled_before = findings.CompiledBefore()

    # --- start-up --------------------------------------------------------------------------

    def start(self) -> None:
        started = time.perf_counter()
        import torch  # noqa: F401 - timed here: the hello reports the import

        from playground.worker import compat
        from playground.worker.capture.records import Capturer

        # Every process below us is one of our forks: each starts with its own compile threads.
        os.register_at_fork(after_in_child=compat.forget_compile_threads)
        self.capturer = Capturer()
        # __main__ paused the collector for the imports: what they made is collected once and
        # frozen, and the collector is on again for the warm-up and everything after it.
        warmup.freeze()
        gc.enable()
        warm_s = self.warm("eager") if os.environ.get("COMPILE_PLAYGROUND_WARMUP", "1") != "0" else 0.0
        warmup.freeze()
        fork_ok = warmup.fork_probe()
        if not fork_ok and warm_s:
            # Something in the warm-up started a thread pool that a forked child cannot use (an
            # OpenMP pool: gelu does it even on 2x2). Start over without warming: slower, safe.
            self.spare.drop()
            reexec.restart_unwarmed(self.channel, "COMPILE_PLAYGROUND_WARMUP", [])
        self.requests.pending.extend(reexec.requeued())
        hello = _hello(round(time.perf_counter() - started - warm_s, 3), warm_s, fork_ok, self.isolated)
        self.channel.send({"event": "hello", **hello.to_dict()})
        self._fork_spare()

    def warm(self, backend: str) -> float:
        """The warm-up run (warmup.warm) here; its seconds."""
        started = time.perf_counter()
        self.inductor_started |= warmup.warm(self.capturer, backend, self.inductor_started)
        return time.perf_counter() - started

    def inherited(self, held: HeldReport | None = None, others: tuple[int, ...] = ()) -> Inherited:
        """What a child forked now needs of this process (child.py): with `held`, where its
        report goes back; `others`, more of our descriptors it must close (other ranks' reports)."""
        return Inherited(
            channel=self.channel,
            crash_log=self.crash_log,
            capturer=self.capturer,
            template_fds=(self.channel.in_fd, *self.spare.fds(), *others),
            inductor_started=self.inductor_started,
            report_fd=held.fd if held is not None else -1,
        )

    def _fork_spare(self) -> None:
        """The next run's child, forked ahead (spare.py), unless the next request is already
        here or runs are not isolated."""
        if self.isolated and not self.requests.pending:
            self.spare.fork(self.inherited())

    # --- the loop --------------------------------------------------------------------------

    def serve(self) -> None:
        while True:
            request = self._next_request()
            if request is None:
                return
            self._run(request)

    def _next_request(self) -> WorkerRequest | None:
        while not self.requests.pending and not self.requests.shutdown:
            if self.channel.eof:
                return None
            readable = self.stragglers.select([self.channel.in_fd], None)
            if self.channel.in_fd in readable:
                for message in self.channel.read_available():
                    self.requests.accept(message, running_id=None)
        if self.requests.shutdown:
            return None
        return self.requests.pending.popleft()

    def _reference_pids(self) -> list[int]:
        own = self.references.pids if self.references is not None else []
        lanes = self.lanes.pids if self.lanes is not None else []
        return [*own, *(self.group.pids if self.group is not None else []), *lanes]

    def _run(self, request: WorkerRequest) -> None:
        unsigned = self.channel.expect(request)
        run_id = request.id
        if not self.inductor_warm and inductor_warmup.before(request):
            self._warm_inductor(request)
        if self.isolated and (request.run.settings.ranks > 1 or self.launch is not None):
            outcome, status = self._ranks(unsigned)
            self.channel.send(RunEnded.of(outcome, status, run_id).to_dict())
            self.stragglers.sweep(grace=outcome != "ok")
            if not request.run.last and not self.requests.shutdown:
                self._fork_spare()
            return
        if fix_lanes.asked(request, self.isolated):
            outcome, status = fix_lanes.run_with_fixes(self, request)
        else:
            outcome, status = self._one(request, unsigned)
        self.channel.send(RunEnded.of(outcome, status, run_id).to_dict())
        if not self.isolated:
            return
        # The snippet's leftovers (a Popen never waited on), and a killed run's compiler, which
        # is given its grace.
        self.stragglers.sweep(grace=outcome != "ok")
        if not request.run.last and not self.requests.shutdown:  # a one-shot check has no next run to warm a child for
            # The libraries it imported, for the next run.
            preimport.after_run(request, self.channel, list(self.requests.pending), self.spare.drop)
            if inductor_warmup.after(request, self.inductor_warm, bool(self.requests.pending)):
                self._warm_inductor(None)
            warmup_model.between_runs(self.channel, self.spare.drop, self.requests.pending)
            self._fork_spare()

    def _one(self, request: WorkerRequest, unsigned: WorkerRequest) -> tuple[str, dict[str, Any]]:
        """The run (and the code child, when asked): its outcome and status."""
        code = CodeRun.asked(request)
        try:
            run = request if code is None else code.run_request()
            then = None
            if self.isolated:  # forked just after the child has its request (Forked.fork says why)
                lane = findings.lane_wanted(request.run, self.compiled_before)
                self.references = Forked(self.inherited(), unsigned, lane=lane, later=True)  # never the run's key
                run = self.references.request(run)
                then = partial(self.references.fork, self.inherited)
            outcome, status, held = self._first(run, then)
            if outcome == "ok":
                self.compiled_before.add(request.run)  # the backend's caches now hold its graphs
            if outcome == "died" and self.references is not None:
                eager = self.references.eager_failure(wait_s=min(request.run.flags.timeout_s or 30.0, 30.0))
                if eager is not None:
                    status = {**status, "eager_failure": eager}
            if code is not None:
                outcome, status = _with_code(self, code, outcome, status, held)
        finally:
            if self.references is not None:
                self.references.close()
                self.references = None
        return outcome, status

    def _ranks(self, request: WorkerRequest) -> tuple[str, dict[str, Any]]:
        """A run across ranks (rank_group.py): every rank forked from here, rank 0 in the spare
        when one is warm."""
        self.group = RankGroup(self, request, self.launch)
        try:
            return self.group.run()
        finally:
            self.group.close()
            self.group = None

    def _first(
        self, request: WorkerRequest, then: Callable[[], None] | None = None
    ) -> tuple[str, dict[str, Any], dict[str, Any] | None]:
        """The run itself, in the spare child or a fresh one: its outcome, exit status and held
        report (readback.py; None when it sent its report to the client, or sent none). `then`
        runs once the child has its request (the references' forks)."""
        if not self.isolated:
            # benchmarks/latency.py's baseline: no isolation at all
            held = HeldReport() if request.held else None
            try:
                self.inductor_started |= run_here(self.inherited(held), request)
                return "ok", {"pid": os.getpid()}, held.first() if held is not None else None
            finally:
                if held is not None:
                    held.close()
        # Not a program in the spare: its malloc was set for one run, which a program's own
        # timings would show (child.run_child).
        return self._child(request, run_child, spare=request.run.program is None, then=then)

    def _child(
        self, request: WorkerRequest, main: Callable[..., None], *, spare: bool, then: Callable[[], None] | None = None
    ) -> tuple[str, dict[str, Any], dict[str, Any] | None]:
        """`main` in a child (the spare, when `spare` and one is ready), waited for under the
        request's timeout; its outcome, exit status, and the message it held back when the
        request holds its report or `main` is the code child (else None)."""
        wanted = request.held or main is code_child
        handed = self.spare.hand(request) if spare else None
        held: HeldReport | None
        if handed is not None:
            pid, held = handed
        else:
            held = HeldReport() if wanted else None
            parent = os.getpid()
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child; its coverage is the run itself
                main(self.inherited(held), request, parent)
        try:
            self.child = pid
            if then is not None:
                then()
            # Only the run's child dumps its stack before the timeout (child.dump_after).
            outcome, status = _wait_child(self, pid, request.id, request.run.flags.timeout_s, dumps=main is run_child)
            self.child = None
            # A child killed mid-write leaves half a line in the pipe: end it, the client skips it.
            self.channel.send_bytes(b"\n")
            return outcome, status, held.first() if held is not None and wanted else None
        finally:
            if held is not None:
                held.close()

    def _warm_inductor(self, request: WorkerRequest | None) -> None:
        """Inductor's one-time start-up here (inductor_warmup.py)."""
        inductor_warmup.warm(self.channel, request, self.warm, self.spare.drop, list(self.requests.pending))
        self.inductor_warm = True

    def shutdown(self) -> None:
        """Kill every process below the template at once: the run, its references, the spare,
        what the snippet started, and a compiler (its unfinished file in Inductor's cache
        removed). Called from the SIGTERM handler too, wherever the template was (importing
        torch, warming Inductor): quitting takes no longer than these kills."""
        # One SIGKILL each first, so that the kernel tears them down side by side (a warmed
        # spare took 0.1 s to reap on its own), then each is reaped.
        procs.kill_all([p for p in (self.child, self.spare.pid, *self._reference_pids()) if p])
        self.child = None
        if self.group is not None:
            self.group.close()
            self.group = None
        if self.references is not None:
            self.references.close()
            self.references = None
        if self.lanes is not None:
            self.lanes.close()  # the variants and their references, reaped, their folder removed
            self.lanes = None
        self.spare.drop()
        self.stragglers.settle(_inductor_cache_dir())


def _hello(import_s: float, warm_s: float, fork_ok: bool, isolated: bool) -> WorkerHello:
    """The handshake: what this worker's torch is and can do, and what starting it took."""
    import torch

    from playground.worker import compat
    from playground.worker.run.spine import switches

    return WorkerHello(
        torch_version=torch.__version__,
        cuda_available=bool(torch.cuda.is_available()),
        backends=tuple(compat.list_backends()),
        config_keys=switches.catalog(),
        pid=os.getpid(),
        python=sys.version.split()[0],
        import_s=import_s,
        warm_s=round(warm_s, 3),
        isolation="fork" if isolated else "none",
        fork_ok=fork_ok,
        threads=_thread_count(),
        rss_mb=round(rss_mb(), 1),
    )


def _with_code(
    template: Template, code: CodeRun, outcome: str, status: dict[str, Any], message: dict[str, Any] | None
) -> tuple[str, dict[str, Any]]:
    """The run's held report sent, with the code Dynamo wrote from a second child
    when the run ended well (dynamo_code/held_report.py); the outcome the run ends with. A cancel during
    the second child cancels the run; its failure costs only the code."""
    held = code.held(message)
    if held is None or outcome == "cancelled":
        return outcome, status  # no report to send, or nobody waits for it
    from playground.worker import compat

    fields = code.without_child(held, template.isolated, compat.depyf_version())
    if outcome != "ok":
        fields = [], f"depyf failed: not run, as the report's run ended {outcome} after its report"
    if fields is None:
        template.channel.send(code.progress())
        request = code.code_request()
        code_outcome, code_status, found = template._child(request, code_child, spare=False)
        if code_outcome == "cancelled":
            return code_outcome, code_status
        fields = code.result(code_outcome, code_status, request.run.flags.timeout_s, found)
    template.channel.send(code.merged(held, *fields))
    return outcome, status


def _wait_child(
    template: Template, pid: int, run_id: Any, timeout: float | None, *, dumps: bool = False
) -> tuple[str, dict[str, Any]]:
    """Wait for the child `pid` to end, reading the client's messages meanwhile: a cancel or a
    closed pipe kills it, and so does `timeout`; how it ended."""
    pidfd = os.pidfd_open(pid)
    start = time.monotonic()
    deadline = None if timeout is None else start + timeout
    killed_for = ""
    try:
        while True:
            readable = template.stragglers.select([template.channel.in_fd, pidfd], deadline)
            if pidfd in readable:
                break
            if template.channel.in_fd in readable:
                stop = False
                for message in template.channel.read_available():
                    stop = template.requests.accept(message, running_id=run_id) or stop
                if (stop or template.channel.eof) and not killed_for:
                    killed_for = "cancelled"
                    procs.kill_all([pid])
            elif deadline is not None and time.monotonic() >= deadline and not killed_for:
                killed_for = "timeout"
                procs.kill_all([pid])
                deadline = None
    finally:
        os.close(pidfd)
    dumping = dumps and timeout is not None and time.monotonic() >= start + dump_after(timeout)
    return _ended(pid, killed_for, dumping)


def _ended(pid: int, killed_for: str, dumping: bool = False) -> tuple[str, dict[str, Any]]:
    """Reap the run's child (procs.ended)."""
    return procs.ended(pid, killed_for, dumping)


def _inductor_cache_dir() -> str | None:
    """Inductor's on-disk cache, where its compilers write: torch's own answer once Inductor is
    imported; before that, what torch would answer (its env variable, or its default folder)."""
    utils = sys.modules.get("torch._inductor.runtime.cache_dir_utils")
    if utils is not None:
        with contextlib.suppress(Exception):
            return str(utils.cache_dir())
    import getpass
    import tempfile

    with contextlib.suppress(Exception):
        return os.environ.get("TORCHINDUCTOR_CACHE_DIR") or os.path.join(
            tempfile.gettempdir(), "torchinductor_" + getpass.getuser()
        )
    return None


def _thread_count() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return -1
