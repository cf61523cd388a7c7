"""The long-lived worker process: imports torch once, then serves runs over a private pipe.

Started by playground.client as `python -m playground.worker`. The protocol is one JSON object
per line in each direction (no pickle: nothing of the user's crosses the boundary but JSON).

The snippet is arbitrary code: it may print megabytes, read stdin or write straight to file
descriptor 1. So the first thing the worker does is move the channel off fds 0 and 1 onto
private descriptors and point 0 at /dev/null; during a run fds 1 and 2 go to a temporary file
that is read back (truncated) into the report. Nothing the snippet does can corrupt the channel.
"""

from __future__ import annotations

import faulthandler
import json
import os
import queue
import sys
import tempfile
import threading
import time
from typing import Any, BinaryIO

#: What the report keeps of the snippet's output: the head and the tail.
OUTPUT_HEAD = 48 * 1024
OUTPUT_TAIL = 16 * 1024


class Channel:
    def __init__(self) -> None:
        in_fd = os.dup(0)
        out_fd = os.dup(1)
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.dup2(2, 1)  # until a run redirects it, stray writes to fd 1 go to stderr
        os.close(devnull)
        self.reader: BinaryIO = os.fdopen(in_fd, "rb", buffering=0)
        self.writer: BinaryIO = os.fdopen(out_fd, "wb", buffering=0)
        self.lock = threading.Lock()

    def send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message, default=_json_default, allow_nan=False) + "\n").encode()
        with self.lock:
            self.writer.write(data)

    def lines(self):  # noqa: ANN201 - a generator of dicts
        buffer = b""
        while True:
            chunk = self.reader.read(65536)
            if not chunk:
                return
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                if line.strip():
                    yield json.loads(line)


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


def _internal_error(request: dict[str, Any], exc: Exception) -> dict[str, Any]:
    import traceback

    import torch

    from playground.report import blank_report

    error = {
        "kind": "worker",
        "type": type(exc).__name__,
        "message": f"internal error in compile-playground's worker: {exc}",
        "line": None,
        "detail": "".join(traceback.format_exception(exc))[-6000:],
    }
    return blank_report(request.get("path", ""), request.get("settings") or {}, error, torch.__version__)


def main() -> None:
    channel = Channel()
    # A segfault or a hung run dumps the Python stack to stderr, which the client drains and
    # reads the snippet's line from.
    # (a private copy of fd 2: during a run fd 2 points at the snippet's output file.)
    crash_log = os.fdopen(os.dup(2), "w")
    faulthandler.enable(file=crash_log, all_threads=False)
    started = time.perf_counter()
    import torch

    from playground import compat
    from playground.capture import Capturer
    from playground.runner import Cancelled, Experiment

    capturer = Capturer()
    channel.send(
        {
            "event": "hello",
            "torch_version": torch.__version__,
            "cuda_available": bool(torch.cuda.is_available()),
            "backends": compat.list_backends(),
            "pid": os.getpid(),
            "python": sys.version.split()[0],
            "import_s": round(time.perf_counter() - started, 3),
            "rss_mb": round(rss_mb(), 1),
        }
    )

    requests: queue.Queue[dict[str, Any] | None] = queue.Queue()
    cancel_flag = threading.Event()

    def read_requests() -> None:
        try:
            for message in channel.lines():
                if message.get("op") == "cancel":
                    cancel_flag.set()
                else:
                    requests.put(message)
        finally:
            requests.put(None)  # the client went away: exit
            # If a run is stuck (an infinite loop), nobody is left to wait for it.
            time.sleep(3.0)
            os._exit(0)

    threading.Thread(target=read_requests, daemon=True).start()

    while True:
        request = requests.get()
        if request is None or request.get("op") == "shutdown":
            break
        if request.get("op") != "run":
            continue
        cancel_flag.clear()
        run_id = request.get("id")

        def emit(event: dict[str, Any], run_id: Any = run_id) -> None:
            channel.send(_sanitize(dict(event, id=run_id)))

        timeout = request.get("timeout_s")
        with OutputCapture() as out:
            if timeout:
                # Dump the stack to the real stderr just before the client gives up on us.
                faulthandler.dump_traceback_later(max(float(timeout) - 0.5, 0.5), exit=False, file=out.saved_err)
            try:
                report = Experiment(capturer, request, emit, cancel_flag.is_set, out.set_mark).run()
                cancelled = False
            except Cancelled:
                cancelled = True
                report = {}
            except Exception as exc:  # noqa: BLE001 - a bug of ours must not end the worker
                cancelled = False
                report = _internal_error(request, exc)
            finally:
                faulthandler.cancel_dump_traceback_later()
        output = out.read()
        if cancelled:
            emit({"event": "cancelled"})
            continue
        report["output"] = output
        report["worker"] = {"pid": os.getpid(), "rss_mb": round(rss_mb(), 1)}
        emit({"event": "report", "report": report})


if __name__ == "__main__":
    main()
