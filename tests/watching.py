"""`compile-playground watch --json-lines` as a test drives it: a subprocess whose lines are
collected as they come, with bounded waits that say what they waited for."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

WAIT_S = 90.0


class WatchProcess:
    def __init__(self, path: Path, *extra_args: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "playground", "watch", str(path), "--json-lines", "--no-timing", *extra_args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        self.lines: list[dict] = []
        self.arrived: list[float] = []
        self.bad: list[str] = []
        self.stderr = ""
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            with self.cond:
                try:
                    self.lines.append(json.loads(raw))
                    self.arrived.append(time.monotonic())
                except ValueError:
                    self.bad.append(raw[:200])
                self.cond.notify_all()

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        self.stderr = self.proc.stderr.read()

    def summary(self) -> str:
        return ", ".join(f"{ln['stage'][0]}:{ln['content_sha256'][:8]}" for ln in self.lines[-12:])

    def wait_line(self, predicate: Callable[[dict], bool], what: str, start: int = 0, timeout: float = WAIT_S) -> dict:
        """The first `complete` line from index `start` on that satisfies `predicate`."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for line in self.lines[start:]:
                    if line["stage"] == "complete" and predicate(line):
                        return line
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    raise AssertionError(
                        f"no complete line for {what} within {timeout:g} s "
                        f"(exit {self.proc.poll()}); last lines: {self.summary()}"
                    )
                self.cond.wait(0.2)

    def wait_complete(self, digest: str, timeout: float = WAIT_S) -> dict:
        return self.wait_line(lambda line: line["content_sha256"] == digest, digest[:8], timeout=timeout)

    def wait_quiet(self, quiet_s: float, timeout: float = WAIT_S) -> None:
        """Until no line has arrived for `quiet_s`."""
        deadline = time.monotonic() + timeout
        while True:
            with self.cond:
                last = self.arrived[-1] if self.arrived else 0.0
            if time.monotonic() - last >= quiet_s:
                return
            if time.monotonic() > deadline:
                raise AssertionError(f"watch never went quiet within {timeout:g} s; last lines: {self.summary()}")
            time.sleep(0.1)

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
