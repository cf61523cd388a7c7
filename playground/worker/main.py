"""The worker: a template process that imports torch once, and one forked child per run.

Started by playground.engine.client as `python -m playground.worker.main`. The protocol is one JSON object
per line in each direction (no pickle: nothing of the user's crosses the boundary but JSON).

Why a child per run: a snippet can change anything in the process it runs in (torch's config
modules, default dtype, grad mode, RNG, sys.modules, sys.path, the working directory, the
environment, signal handlers, threads). A forked child starts from the template's memory, which
no run ever touches, and takes all of that with it when it exits: every save is a fresh process
as far as the snippet can tell, at the price of one fork (measured in benchmarks/isolation.py
and README.md). A cancel or a timeout is a kill of the child, a crash loses only the child, and
memory does not grow across runs.

What keeps forking safe: the template is single-threaded when it forks (no reader thread; it
multiplexes the channel and the child with select), never touches CUDA (NVML answers
is_available), and warms Dynamo and Inductor only on 4-element tensors, which stay below
OpenMP's parallel grain, so no thread pool exists to be copied in a broken state
(../shared/TORCH_NOTES.md: a child forked after a large op hangs on its first parallel op).

The snippet is arbitrary code: it may print megabytes, read stdin or write straight to file
descriptor 1. So the first thing the worker does is move the channel off fds 0 and 1 onto
private descriptors and point 0 at /dev/null; during a run fds 1 and 2 go to a temporary file
that is read back (truncated) into the report. Nothing the snippet does can corrupt the channel.
"""

from __future__ import annotations

import contextlib
import faulthandler
import gc
import json
import math
import os
import select
import signal
import sys
import tempfile
import time
from collections import deque
from typing import Any

from playground.worker import procs

#: What the report keeps of the snippet's output: the head and the tail.
OUTPUT_HEAD = 48 * 1024
OUTPUT_TAIL = 16 * 1024
#: How long what a killed run left behind (Inductor's g++) may go on before it is killed too: a
#: compiler killed mid-write leaves a truncated .so in Inductor's on-disk cache ("file too short").
STRAGGLER_GRACE_S = 1.5
#: The longest run timeout the worker accepts (faulthandler's timer overflows on inf or 1e12).
MAX_TIMEOUT_S = 7 * 24 * 3600.0

WARMUP_SNIPPET = """
import torch

def fn(x, n):
    y = torch.sin(x) * n
    print("warm-up")
    return torch.cos(y).sum()

def inputs():
    return [(torch.ones(4, requires_grad=True), 2), (torch.ones(3, requires_grad=True), 3)]
"""


class Channel:
    """The private pipe pair to the client. The template reads it with select (no thread, so
    that forking stays safe); a run's child only writes."""

    def __init__(self) -> None:
        in_fd = os.dup(0)
        out_fd = os.dup(1)
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(2, 1)  # until a run redirects it, stray writes to fd 1 go to stderr
        os.close(devnull)
        self.in_fd = in_fd
        self.out_fd = out_fd
        self._buffer = bytearray()
        self._scanned = 0
        self.eof = False

    def send(self, message: dict[str, Any]) -> None:
        self.send_bytes((json.dumps(message, default=_json_default, allow_nan=False) + "\n").encode())

    def send_bytes(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self.out_fd, view)
            view = view[written:]

    def read_available(self) -> list[dict[str, Any]]:
        """The complete messages that one read brings (call when select says readable)."""
        chunk = os.read(self.in_fd, 1 << 20)
        if not chunk:
            self.eof = True
            return []
        self._buffer += chunk
        messages = []
        while True:
            # Scan only what is new: a 50 MB snippet arrives in many reads.
            end = self._buffer.find(b"\n", self._scanned)
            if end < 0:
                self._scanned = len(self._buffer)
                return messages
            line = bytes(self._buffer[:end])
            del self._buffer[: end + 1]
            self._scanned = 0
            if line.strip():
                try:
                    messages.append(json.loads(line))
                except ValueError:
                    continue


def _json_default(value: Any) -> Any:
    return repr(value)


def _sanitize(value: Any) -> Any:
    """JSON has no NaN or infinity: they become None."""
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else None
    if isinstance(value, dict):
        return {str(k): _sanitize(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_sanitize(v) for v in value]
    return value


class OutputCapture:
    """Points fds 1 and 2 at a temporary file for the duration of a run."""

    def __init__(self) -> None:
        self.saved_out = os.dup(1)
        self.saved_err = os.dup(2)

    def __enter__(self) -> OutputCapture:
        sys.stdout.flush()
        sys.stderr.flush()
        self.file = tempfile.TemporaryFile()
        self.mark: int | None = None
        os.dup2(self.file.fileno(), 1)
        os.dup2(self.file.fileno(), 2)
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:  # noqa: BLE001 - the snippet may have closed or replaced them
            pass
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
        os.dup2(self.saved_out, 1)
        os.dup2(self.saved_err, 2)

    def set_mark(self) -> None:
        """Output after this point (the timing loop's) is counted but not kept."""
        sys.stdout.flush()
        sys.stderr.flush()
        self.mark = os.lseek(1, 0, os.SEEK_CUR)

    def read(self) -> dict[str, Any]:
        total = self.file.seek(0, os.SEEK_END)
        size = total if self.mark is None else min(self.mark, total)
        self.file.seek(0)
        if size <= OUTPUT_HEAD + OUTPUT_TAIL:
            text = self.file.read(size).decode("utf-8", "replace")
            truncated = False
        else:
            head = self.file.read(OUTPUT_HEAD).decode("utf-8", "replace")
            self.file.seek(size - OUTPUT_TAIL)
            tail = self.file.read(OUTPUT_TAIL).decode("utf-8", "replace")
            text = f"{head}\n… [{size - OUTPUT_HEAD - OUTPUT_TAIL} bytes cut] …\n{tail}"
            truncated = True
        self.file.close()
        out = {"text": text, "bytes": size, "truncated": truncated}
        if total > size:
            out["timing_bytes"] = total - size
        return out


def rss_mb() -> float:
    try:
        with open("/proc/self/statm") as fh:
            pages = int(fh.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _internal_error(request: dict[str, Any], exc: BaseException) -> dict[str, Any]:
    import torch

    from playground.engine.report import blank_report
    from playground.worker.runner import failure

    error = failure("worker", exc, request.get("path", ""), "internal error in compile-playground's worker").error
    error["line"] = None
    return blank_report(request.get("path", ""), request.get("settings") or {}, error, torch.__version__)


def run_timeout(request: dict[str, Any]) -> float | None:
    """The request's timeout as a sane float, None for no timeout."""
    try:
        value = float(request.get("timeout_s") or 0)
    except (TypeError, ValueError):
        return None
    if not math.isfinite(value) or value <= 0:
        return None
    return min(value, MAX_TIMEOUT_S)


class Template:
    """The process that serves runs: it imports torch, warms it, and forks a child per run."""

    def __init__(self, channel: Channel, crash_log: Any) -> None:
        self.channel = channel
        self.crash_log = crash_log
        self.pending: deque[dict[str, Any]] = deque()
        self.inductor_warm = False
        self.straggler_deadline: float | None = None
        self.child: int | None = None
        #: The next run's child, forked and warmed ahead of time: (pid, the pipe its request
        #: will come down). See _prefork.
        self.spare_pid: int | None = None
        self.spare_fd: int | None = None
        self.spare_ready_fd: int | None = None
        #: COMPILE_PLAYGROUND_ISOLATION=none runs in the template itself, as the first version
        #: did: for measuring what isolation costs, never for use (runs leak into each other).
        self.isolated = os.environ.get("COMPILE_PLAYGROUND_ISOLATION", "fork") != "none"

    # --- start-up --------------------------------------------------------------------------

    def start(self) -> None:
        started = time.perf_counter()
        import torch

        from playground.worker import compat, switches
        from playground.worker.capture import Capturer

        self.capturer = Capturer()
        warm_s = self._warm("eager") if os.environ.get("COMPILE_PLAYGROUND_WARMUP", "1") != "0" else 0.0
        self._freeze()
        fork_ok = self._fork_probe()
        if not fork_ok and warm_s:
            # Something in the warm-up started a thread pool that a forked child cannot use (an
            # OpenMP pool: gelu does it even on 2x2). Start over without warming: slower, safe.
            self._restart_unwarmed("COMPILE_PLAYGROUND_WARMUP", [])
        self.pending.extend(self._requeued())
        self.channel.send(
            {
                "event": "hello",
                "torch_version": torch.__version__,
                "cuda_available": bool(torch.cuda.is_available()),
                "backends": compat.list_backends(),
                "config_keys": switches.catalog(),
                "pid": os.getpid(),
                "python": sys.version.split()[0],
                "import_s": round(time.perf_counter() - started - warm_s, 3),
                "warm_s": round(warm_s, 3),
                "isolation": "fork" if self.isolated else "none",
                "fork_ok": fork_ok,
                "threads": _thread_count(),
                "rss_mb": round(rss_mb(), 1),
            }
        )
        self._prefork()

    def _restart_unwarmed(self, switch: str, requests: list[dict[str, Any]]) -> None:
        """Replace this process by a fresh worker with one warm-up turned off; the requests it
        held are handed over in a file (the client ignores the second hello)."""
        print(f"compile-playground: forked children hang after a warm-up; restarting with {switch}=0", file=sys.stderr)
        os.environ[switch] = "0"
        if requests:
            fd, path = tempfile.mkstemp(prefix="compile-playground-requeue-", suffix=".json")
            with os.fdopen(fd, "w") as fh:
                json.dump(requests, fh)
            os.environ["COMPILE_PLAYGROUND_REQUEUE"] = path
        self._drop_spare()
        os.dup2(self.channel.in_fd, 0)  # the channel goes back where a new worker looks for it
        os.dup2(self.channel.out_fd, 1)
        os.execv(sys.executable, [sys.executable, "-m", "playground.worker"])

    @staticmethod
    def _requeued() -> list[dict[str, Any]]:
        path = os.environ.pop("COMPILE_PLAYGROUND_REQUEUE", "")
        if not path:
            return []
        try:
            with open(path) as fh:
                return list(json.load(fh))
        except (OSError, ValueError):
            return []
        finally:
            with contextlib.suppress(OSError):
                os.unlink(path)

    def _warm(self, backend: str) -> float:
        """Run a tiny snippet through the whole experiment in the template, then forget it:
        children inherit Dynamo's and (for inductor) Inductor's one-time start-up, and nothing
        of the run itself (reset and counters are cleared again in every child)."""
        from playground.worker import compat
        from playground.worker.runner import Experiment

        started = time.perf_counter()
        fd, path = tempfile.mkstemp(prefix="compile-playground-warmup-", suffix=".py")
        try:
            with os.fdopen(fd, "w") as fh:
                fh.write(WARMUP_SNIPPET)
            request = {
                "op": "run",
                "id": 0,
                "path": path,
                "source": WARMUP_SNIPPET,
                "settings": {"backend": backend},
                "timing": True,
                "min_run_time": 0.001,
                "warmup": True,
            }
            with OutputCapture():
                try:
                    Experiment(self.capturer, request, lambda event: None, lambda: False).run()
                except Exception as exc:  # noqa: BLE001 - a warm-up failure only costs speed
                    print(f"compile-playground: {backend} warm-up failed: {exc!r}", file=sys.stderr)
        finally:
            os.unlink(path)
            compat.clear_run_state()
        return time.perf_counter() - started

    @staticmethod
    def _freeze() -> None:
        """Move everything the template holds out of the garbage collector's sight: a child's
        collection would otherwise write to every object's header and copy the template's whole
        heap, page by page (measured: a third of a small run's time)."""
        gc.collect()
        gc.freeze()

    def _fork_probe(self, timeout_s: float = 10.0) -> bool:
        """Fork a child that runs a parallel op (a million-element add and a 256x256 matmul)
        and see that it finishes: a child of a process whose OpenMP pool has started hangs on
        its first parallel op (../shared/TORCH_NOTES.md)."""
        import torch

        pid = os.fork()
        if pid == 0:  # pragma: no cover - the probe child
            try:
                a = torch.ones(1_000_000)
                (a + a).sum()
                b = torch.ones(256, 256)
                (b @ b).sum()
            finally:
                os._exit(0)
        pidfd = os.pidfd_open(pid)
        try:
            finished = bool(select.select([pidfd], [], [], timeout_s)[0])
        finally:
            os.close(pidfd)
        if not finished:
            procs.kill_all([pid])
        _, status = os.waitpid(pid, 0)
        return finished and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0

    # --- the loop --------------------------------------------------------------------------

    def serve(self) -> None:
        while True:
            request = self._next_request()
            if request is None:
                return
            self._run(request)

    def _next_request(self) -> dict[str, Any] | None:
        while not self.pending:
            if self.channel.eof:
                return None
            readable = self._select([self.channel.in_fd], None)
            if self.channel.in_fd in readable:
                for message in self.channel.read_available():
                    self._accept(message, running_id=None)
        request = self.pending.popleft()
        return None if request.get("op") == "shutdown" else request

    def _accept(self, message: dict[str, Any], running_id: Any) -> bool:
        """File one message from the client; True when it asks to stop the running child."""
        op = message.get("op")
        if op == "run":
            self.pending.append(message)
        elif op == "shutdown":
            self.pending.appendleft(message)
            return True
        elif op == "cancel":
            if running_id is not None and message.get("id") == running_id:
                return True
            self.pending = deque(r for r in self.pending if r.get("id") != message.get("id"))
        return False

    def _select(self, fds: list[int], deadline: float | None) -> list[int]:
        """select() on `fds` until `deadline`, killing stragglers whose grace has run out."""
        while True:
            now = time.monotonic()
            limits = [d for d in (deadline, self.straggler_deadline) if d is not None]
            wait = max(min(limits) - now, 0.0) if limits else None
            readable, _, _ = select.select(fds, [], [], wait)
            if self.straggler_deadline is not None and time.monotonic() >= self.straggler_deadline:
                self._sweep()
            elif self.straggler_deadline is not None:
                self._sweep(grace=True)
            if readable or (deadline is not None and time.monotonic() >= deadline):
                return readable

    def _sweep(self, grace: bool = False) -> None:
        """Kill whatever earlier runs left below us, except the run in progress. With `grace`,
        a compiler (Inductor's g++) is left to finish writing until STRAGGLER_GRACE_S: a
        compiler killed mid-write leaves a truncated .so in Inductor's on-disk cache."""
        keep = {p for p in (self.child, self.spare_pid) if p is not None}
        left = procs.descendants(os.getpid(), exclude=keep)
        if grace:
            compilers = [p for p in left if procs.is_compiler(p)]
            left = [p for p in left if p not in compilers]
            if compilers and self.straggler_deadline is None:
                self.straggler_deadline = time.monotonic() + STRAGGLER_GRACE_S
            elif not compilers:
                self.straggler_deadline = None
        else:
            self.straggler_deadline = None
        procs.kill_all(left)
        procs.reap(left)

    def _run(self, request: dict[str, Any]) -> None:
        run_id = request.get("id")
        settings = request.get("settings") or {}
        if settings.get("backend", "inductor") == "inductor" and not self.inductor_warm:
            self.channel.send(
                {
                    "event": "progress",
                    "id": run_id,
                    "phase": "loading",
                    "call": None,
                    "calls": None,
                    "message": "starting Inductor in the worker (once per worker)",
                }
            )
            self._drop_spare()  # it was forked before Inductor was warm
            if os.environ.get("COMPILE_PLAYGROUND_INDUCTOR_WARMUP", "1") != "0":
                self._warm("inductor")
                self._freeze()
                if not self._fork_probe():
                    # Inductor's warm-up kernels started a pool after all: this template can no
                    # longer fork safely. Start over (this run included) without that warm-up.
                    self._restart_unwarmed("COMPILE_PLAYGROUND_INDUCTOR_WARMUP", [request, *self.pending])
            self.inductor_warm = True
        if not self.isolated:
            _run_in_child(self, request)  # benchmarks/latency.py's baseline: no isolation at all
            self.channel.send({"event": "ended", "id": run_id, "outcome": "ok", "pid": os.getpid()})
            return
        pid = self._hand_to_spare(request)
        if pid is None:
            parent = os.getpid()
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child; its coverage is the run itself
                _child(self, request, parent)
        self.child = pid
        outcome, status = self._wait_child(pid, run_id, run_timeout(request))
        self.child = None
        # A child killed mid-write leaves half a line in the pipe: end it, the client skips it.
        self.channel.send_bytes(b"\n")
        self.channel.send({"event": "ended", "id": run_id, "outcome": outcome, **status})
        # The snippet's leftovers (a Popen never waited on), and a killed run's compiler, which
        # is given its grace.
        self._sweep(grace=outcome != "ok")
        self._prefork()

    # --- the spare child -------------------------------------------------------------------

    def _prefork(self) -> None:
        """Fork the next run's child now and let it warm itself while nobody waits.

        A child pays, on its first compile, for what the template could not do for it: the
        pages it writes are copied from the template one by one, Dynamo's guard profiler
        flushes the CPU cache through freshly faulted memory, and the first parallel op starts
        an OpenMP pool (which the template must never start). A spare child runs the warm-up
        (plus a parallel op) while the user is still reading the last report, then waits for
        its request on a pipe; every spare is made the same way, so every run starts from the
        same state."""
        if not self.isolated or self.spare_pid is not None or self.channel.eof:
            return
        if self.pending or select.select([self.channel.in_fd], [], [], 0)[0]:
            return  # the next request is already here (the matrix, a test): fork for it directly
        read_fd, write_fd = os.pipe()
        ready_read, ready_write = os.pipe()
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the spare child
            os.close(write_fd)
            os.close(ready_read)
            _spare_child(self, read_fd, ready_write, parent)
        os.close(read_fd)
        os.close(ready_write)
        self.spare_pid, self.spare_fd, self.spare_ready_fd = pid, write_fd, ready_read

    def _hand_to_spare(self, request: dict[str, Any]) -> int | None:
        """Send the request down the spare's pipe; its pid, or None when there is no spare."""
        if self.spare_pid is None or self.spare_ready_fd is None:
            return None
        if not select.select([self.spare_ready_fd], [], [], 0)[0]:
            # Still warming (saves in quick succession): a fresh fork is sooner than the rest
            # of its warm-up.
            self._drop_spare()
            return None
        pid, fd = self.spare_pid, self.spare_fd
        os.close(self.spare_ready_fd)
        self.spare_pid = self.spare_fd = self.spare_ready_fd = None
        assert fd is not None
        try:
            data = json.dumps(request).encode()
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

    def _drop_spare(self) -> None:
        if self.spare_pid is not None:
            procs.kill_all([self.spare_pid])
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(self.spare_pid, 0)
        for fd in (self.spare_fd, self.spare_ready_fd):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.spare_pid = self.spare_fd = self.spare_ready_fd = None

    def _wait_child(self, pid: int, run_id: Any, timeout: float | None) -> tuple[str, dict[str, Any]]:
        pidfd = os.pidfd_open(pid)
        deadline = None if timeout is None else time.monotonic() + timeout
        killed_for = ""
        try:
            while True:
                readable = self._select([self.channel.in_fd, pidfd], deadline)
                if pidfd in readable:
                    break
                if self.channel.in_fd in readable:
                    stop = False
                    for message in self.channel.read_available():
                        stop = self._accept(message, running_id=run_id) or stop
                    if (stop or self.channel.eof) and not killed_for:
                        killed_for = "cancelled"
                        procs.kill_all([pid])
                elif deadline is not None and time.monotonic() >= deadline and not killed_for:
                    killed_for = "timeout"
                    procs.kill_all([pid])
                    deadline = None
        finally:
            os.close(pidfd)
        _, wait_status = os.waitpid(pid, 0)
        status: dict[str, Any] = {"pid": pid}
        if os.WIFSIGNALED(wait_status):
            status["signal"] = signal.Signals(os.WTERMSIG(wait_status)).name
        else:
            status["returncode"] = os.WEXITSTATUS(wait_status)
        if killed_for:
            return killed_for, status
        return ("ok" if status.get("returncode") == 0 else "died"), status

    def shutdown(self) -> None:
        """Kill every process below the template: the run at once, what the snippet started,
        and a compiler after its grace."""
        if self.child is not None:
            procs.kill_all([self.child])
            self.child = None
        self._drop_spare()
        self._settle()

    def _settle(self) -> None:
        """Let a compiler in its grace finish (or run out of time), then kill the rest."""
        self._sweep(grace=True)
        while self.straggler_deadline is not None and time.monotonic() < self.straggler_deadline:
            time.sleep(0.05)
            self._sweep(grace=True)
        self._sweep()


def _thread_count() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return -1


def _child(template: Template, request: dict[str, Any], parent: int) -> None:
    """The forked child: one run, its report on the channel, then os._exit (never returns)."""
    code = 0
    try:
        _become_child(template, parent)
        _run_in_child(template, request)
    except BaseException:  # noqa: BLE001 - nothing may escape into the template's code
        code = 70
    finally:
        os._exit(code)


def _start_thread_pools() -> None:
    """What a spare child runs after the warm-up: ops that start OpenMP's pool (in a child,
    which is never forked again, that is safe, and it saves the run the start-up)."""
    import torch

    x = torch.ones(256, 256)
    torch.nn.functional.gelu(x @ x).sum()


def _spare_child(template: Template, read_fd: int, ready_fd: int, parent: int) -> None:
    """A child forked ahead of its run: it warms itself, then waits for its request."""
    code = 0
    try:
        _become_child(template, parent)
        if os.environ.get("COMPILE_PLAYGROUND_WARMUP", "1") != "0":
            from playground.worker import compat

            template._warm("eager")
            with OutputCapture():
                _start_thread_pools()
            compat.clear_run_state()
        os.write(ready_fd, b"r")
        os.close(ready_fd)
        data = bytearray()
        while chunk := os.read(read_fd, 1 << 20):
            data += chunk
        if data:  # an empty pipe: the template dropped us unused
            _run_in_child(template, json.loads(data))
    except BaseException:  # noqa: BLE001 - nothing may escape into the template's code
        code = 70
    finally:
        os._exit(code)


def _become_child(template: Template, parent: int) -> None:
    """What every child does first: die with the template, default signals, no reading."""
    procs.die_with_parent(signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)  # the template died between fork and prctl
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    os.close(template.channel.in_fd)  # only the template reads requests
    for fd in (template.spare_fd, template.spare_ready_fd):
        if fd is not None:
            os.close(fd)  # a run child must not hold the spare's pipes open


def _run_in_child(template: Template, request: dict[str, Any]) -> None:
    from playground.worker.runner import Experiment

    channel = template.channel
    run_id = request.get("id")

    def emit(event: dict[str, Any]) -> None:
        channel.send(_sanitize(dict(event, id=run_id)))

    timeout = run_timeout(request)
    with OutputCapture() as out:
        if timeout:
            # Dump the stack to the real stderr just before the template kills us.
            faulthandler.dump_traceback_later(max(timeout - 0.5, 0.5), exit=False, file=template.crash_log)
        try:
            report = Experiment(template.capturer, request, emit, lambda: False, out.set_mark).run()
        except Exception as exc:  # noqa: BLE001 - a bug of ours still gets a report
            report = _internal_error(request, exc)
        finally:
            faulthandler.cancel_dump_traceback_later()
    report["output"] = out.read()
    report["worker"] = {"pid": os.getpid(), "rss_mb": round(rss_mb(), 1), "isolation": "fork"}
    emit({"event": "report", "report": report})


def main() -> None:
    # Before torch is imported: CUDA availability from NVML (a CUDA context in the template would
    # make every forked child's CUDA unusable), and Inductor compiling in process rather than in a
    # pool of compile workers that would be forked with us.
    os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
    os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
    channel = Channel()
    # A segfault or a hung run dumps the Python stack to stderr, which the client drains and
    # reads the snippet's line from (a private copy of fd 2: during a run fd 2 points at the
    # snippet's output file).
    crash_log = os.fdopen(os.dup(2), "w")
    faulthandler.enable(file=crash_log, all_threads=False)
    # The client may die without a word (SIGKILL): take the runs with us. Orphans of a snippet
    # that left our process group (start_new_session) come back to us and are swept.
    procs.die_with_parent(signal.SIGTERM)
    procs.become_subreaper()
    # The app draws while we compile: the compiler gets what the UI leaves.
    try:
        os.nice(int(os.environ.get("COMPILE_PLAYGROUND_NICE", "5")))
    except (OSError, ValueError):
        pass
    template = Template(channel, crash_log)

    def on_term(signum: int, frame: object) -> None:
        template.shutdown()
        os._exit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, on_term)
    template.start()
    try:
        template.serve()
    finally:
        template.shutdown()


if __name__ == "__main__":
    main()
