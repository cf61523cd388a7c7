"""The worker's end of the pipe to the client: one JSON object per line in each direction (no
pickle: nothing of the user's crosses the boundary but JSON). Worker-side, torch-free."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
import threading
from typing import TYPE_CHECKING, Any

from playground.engine.caps import cap_all
from playground.engine.channel import RUN_KEY as KEY
from playground.engine.lines import encode

if TYPE_CHECKING:
    from playground.worker.run.spine.request import WorkerRequest


class ChannelLost(BaseException):
    """The descriptor the run speaks on is no longer the channel: the snippet closed it (and
    perhaps opened something else in its place). A BaseException: no phase's `except Exception`
    may turn it into a report that could not be sent anyway."""


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
        self._identity = _identity(out_fd)
        self._buffer = bytearray()
        self._scanned = 0
        self.eof = False
        #: Each run's key, by run id: the client believes a message about a run only when it
        #: carries the key the client gave that run.
        self._keys: dict[Any, str] = {}
        #: A record lock that every process writing on the pipe holds for a whole message: a
        #: run's child and its findings lane speak at once, and a message longer than the pipe's
        #: atomic write (4 KiB) would otherwise interleave with the other's. A POSIX lock is the
        #: process's own, so forked writers exclude each other; the threading lock keeps two
        #: threads of one process from releasing each other's.
        self._lock_file = tempfile.TemporaryFile()
        self._threads = threading.Lock()

    def expect(self, request: WorkerRequest) -> WorkerRequest:
        """Sign this run's messages with the key its request brought; the request without it,
        for the experiment (which the snippet can see)."""
        if request.key is not None:
            self._keys[request.id] = request.key
        return request.unsigned()

    def mute(self) -> None:
        """From now on this process's messages go nowhere (a rank other than 0 of a run across
        ranks writes its report to a file; only rank 0 speaks to the client)."""
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, self.out_fd)
        os.close(devnull)
        self._identity = _identity(self.out_fd)

    def send(self, message: dict[str, Any]) -> None:
        # Text from the snippet or torch is cut here, before the pipe (see playground.engine.caps).
        key = self._keys.get(message.get("id"))
        if key is not None:
            message = {**message, KEY: key}
            if message.get("event") == "ended":  # the run's last word
                del self._keys[message.get("id")]
        # A newline first: a partial line someone else left on the descriptor ends there, and
        # cannot swallow this message (the client skips empty lines).
        self.send_bytes(b"\n" + encode(cap_all(message)))

    def send_bytes(self, data: bytes) -> None:
        # Checked before each message (one fstat): a closed descriptor whose number the snippet
        # reused would take the report somewhere else without a word.
        if _identity(self.out_fd) != self._identity:
            raise ChannelLost(self.out_fd)
        with self._threads, self._locked():
            view = memoryview(data)
            while view:
                try:
                    written = os.write(self.out_fd, view)
                except OSError as exc:
                    raise ChannelLost(self.out_fd) from exc
                view = view[written:]

    @contextlib.contextmanager
    def _locked(self) -> Any:
        """The writers' lock for one message; none when the snippet closed its descriptor."""
        fd = self._lock_file.fileno()
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX)
        except (OSError, ValueError):
            yield
            return
        try:
            yield
        finally:
            with contextlib.suppress(OSError, ValueError):
                fcntl.lockf(fd, fcntl.LOCK_UN)

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


def _identity(fd: int) -> tuple[int, int] | None:
    try:
        stat = os.fstat(fd)
    except OSError:
        return None
    return stat.st_dev, stat.st_ino
