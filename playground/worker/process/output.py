"""The snippet's output during a run: fds 1 and 2 point at a temporary file that is read back,
head and tail, into the report. Worker-side, torch-free."""

from __future__ import annotations

import os
import sys
import tempfile

from playground.engine.report import Output

#: What the report keeps of the snippet's output: the head and the tail.
OUTPUT_HEAD = 48 * 1024
OUTPUT_TAIL = 16 * 1024


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
        """Output after this point (the timing loop's, the kernels profile's) is counted but not
        kept; the first mark of a run holds."""
        if self.mark is not None:
            return
        sys.stdout.flush()
        sys.stderr.flush()
        self.mark = os.lseek(1, 0, os.SEEK_CUR)

    def read(self) -> Output:
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
        return Output(text=text, bytes=size, truncated=truncated, timing_bytes=total - size if total > size else None)
