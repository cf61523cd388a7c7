"""The spare child: the next run's child, forked and warmed ahead of time, waiting for its
request on a pipe. Worker-side."""

from __future__ import annotations

import contextlib
import json
import os
import select

from playground.worker.process import limits, procs
from playground.worker.process.child import Inherited, spare_child
from playground.worker.run.spine.request import WorkerRequest


class Spare:
    """At most one spare child: its pid, the pipe its request will come down, and the pipe on
    which it says it is warm."""

    def __init__(self) -> None:
        self.pid: int | None = None
        self.fd: int | None = None
        self.ready_fd: int | None = None

    def fds(self) -> list[int]:
        """The template's ends of the spare's pipes (a run child closes them)."""
        return [fd for fd in (self.fd, self.ready_fd) if fd is not None]

    def fork(self, inherited: Inherited) -> None:
        """Fork the next run's child now and let it warm itself while nobody waits.

        A child pays, on its first compile, for what the template could not do for it: the
        pages it writes are copied from the template one by one, Dynamo's guard profiler
        flushes the CPU cache through freshly faulted memory, and the first parallel op starts
        an OpenMP pool (which the template must never start). A spare child runs the warm-up
        (plus a parallel op) while the user is still reading the last report, then waits for
        its request on a pipe. On a machine busier than its cores it runs only the parallel op
        and the heap's prefault (warmup.spare_experiment_wanted: 0.1 s of CPU instead of 0.5 s
        per run), the state a child forked without a spare starts from too. The template forks
        none when the next request is already waiting, or when it runs without isolation."""
        channel = inherited.channel
        if self.pid is not None or channel.eof:
            return
        if select.select([channel.in_fd], [], [], 0)[0]:
            return  # the next request is already here (the matrix, a test): fork for it directly
        if not limits.spare_wanted():
            return  # turned off, or memory short: a spare would hold ~150 MiB for nobody yet
        read_fd, write_fd = os.pipe()
        ready_read, ready_write = os.pipe()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the spare child
            os.close(write_fd)
            os.close(ready_read)
            spare_child(inherited, read_fd, ready_write, parent)
        os.close(read_fd)
        os.close(ready_write)
        self.pid, self.fd, self.ready_fd = pid, write_fd, ready_read

    def hand(self, request: WorkerRequest) -> int | None:
        """Send the request down the spare's pipe; its pid, or None when there is no spare."""
        if self.pid is None or self.ready_fd is None:
            return None
        if not select.select([self.ready_fd], [], [], 0)[0]:
            # Still warming (saves in quick succession): a fresh fork is sooner than the rest
            # of its warm-up.
            self.drop()
            return None
        pid, fd = self.pid, self.fd
        os.close(self.ready_fd)
        self.pid = self.fd = self.ready_fd = None
        assert fd is not None
        try:
            data = json.dumps(request.to_message()).encode()
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.close(fd)
        except OSError:  # the spare died (killed from outside): fork a fresh child instead
            with contextlib.suppress(OSError):
                os.close(fd)
            procs.kill_all([pid])
            procs.reap([pid])
            return None
        return pid

    def drop(self) -> None:
        if self.pid is not None:
            procs.kill_all([self.pid])
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(self.pid, 0)
        for fd in (self.fd, self.ready_fd):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.pid = self.fd = self.ready_fd = None
