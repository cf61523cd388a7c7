"""What the template reads back from a run's processes, where the snippet runs too. Worker-side,
torch-free.

A report that does not go straight to the client (each rank's, a run asked for Dynamo's code,
the code child's findings) goes into a file of its own that has no name: a memfd the template
makes before the process that writes it is forked (the spare's when the spare is forked), and
that process is the only other one that holds it. No report is a file in a folder: nothing the
snippet or another rank puts there (a rewritten `rank0.json`, a FIFO where the report would be,
a link) stands in for one, or keeps the template waiting. The template reads it once the
writer has ended, at most `MAX_BACK_BYTES`, without blocking.

What this does not guard: the snippet runs in the process that writes its own report, so it can
write what that report says; and a process allowed to ptrace ours (the same user's, by default)
can open any of our descriptors through /proc. The boundary is the process, not the snippet.

The few files still read back (a rank's stack, the eager reference's end) are opened by
`read_regular`: no link followed, nothing but a regular file, never blocking, bounded.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
from typing import Any

#: The most a held report may take: the report, the structured trace included, and under torchrun
#: the other ranks' reports the rank passes on. Past it nothing of it is read.
MAX_BACK_BYTES = 256 * 2**20


class HeldReport:
    """One process's report back to the template: a memfd, written by that process, read here."""

    def __init__(self) -> None:
        # Closed on exec: a program the snippet starts does not get it.
        self.fd = os.memfd_create("compile-playground-report", os.MFD_CLOEXEC)

    def messages(self) -> dict[int, dict[str, Any]]:
        """The messages written, by the rank each names (`frame`): the first of each rank; a
        line that does not read is skipped; none when more than `MAX_BACK_BYTES` was written.
        Read once its writer has ended."""
        if self.fd < 0 or os.fstat(self.fd).st_size > MAX_BACK_BYTES:
            return {}
        data = os.pread(self.fd, MAX_BACK_BYTES, 0)
        found: dict[int, dict[str, Any]] = {}
        for line in data.split(b"\n"):
            head, _, body = line.partition(b" ")
            if not head.isdigit() or int(head) in found:
                continue
            try:
                message = json.loads(body)
            except ValueError:
                continue
            if isinstance(message, dict):
                found[int(head)] = message
        return found

    def first(self) -> dict[str, Any] | None:
        """The one message of a process that is no rank of a group."""
        return next(iter(self.messages().values()), None)

    def close(self) -> None:
        if self.fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = -1


def frame(rank: int, line: bytes) -> bytes:
    """One message of a held report: the rank it is (0 outside a run across ranks), then its JSON
    line (the channel's encoding, which ends in a newline and holds no other)."""
    return b"%d %s" % (rank, line if line.endswith(b"\n") else line + b"\n")


def send_back(fd: int, data: bytes) -> None:
    """`data` appended to a held report (`HeldReport`, this process's descriptor of it)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def read_regular(path: str, limit: int) -> bytes | None:
    """At most `limit` bytes of the regular file `path`; None when it is missing, a link, or
    anything but a regular file (a FIFO, a device), read without ever blocking."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno not in (errno.ENOENT, errno.ELOOP, errno.ENXIO, errno.EACCES, errno.EPERM, errno.ENOTDIR):
            raise
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        data = bytearray()
        while len(data) < limit:
            chunk = os.read(fd, min(1 << 20, limit - len(data)))
            if not chunk:
                break
            data += chunk
        return bytes(data)
    finally:
        os.close(fd)
