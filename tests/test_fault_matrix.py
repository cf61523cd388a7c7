"""The fault matrix: every bad snippet through `check` and `watch --json-lines` (the app's route
is in tests/tui/test_tui_fault_matrix_app.py). Each must give a one-line cause naming the problem
(and its line), `check`'s documented exit code, and leave the next good save working."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.faults import FAULTS, GOOD, Fault, child_pid, pid_alive

TIMEOUT_S = "5"  # the run timeout for the infinite loop; the default is 120 s
#: The faults are about bad input, not Inductor: a cold Inductor compile on a fresh machine can
#: take longer than TIMEOUT_S.
EAGER = ["--backend", "eager"]


def assert_reported(fault: Fault, report: dict) -> None:
    error = report["error"]
    if fault.kind is None:
        assert error is None, (fault.name, error)
    else:
        assert error is not None, fault.name
        assert error["kind"] == fault.kind, (fault.name, error)
        assert "\n" not in error["message"], (fault.name, error["message"])
        message = f"{error['type']}: {error['message']}"  # the one-line cause as shown
        for word in fault.words:
            assert word in message, (fault.name, word, message)
        if fault.line is not None:
            assert error["line"] == fault.line, (fault.name, error)
    if fault.extra is not None:
        fault.extra(report)


@pytest.mark.parametrize("fault", FAULTS, ids=lambda f: f.name)
def test_check_route(fault: Fault, tmp_path: Path):
    path = fault.make(tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "playground", "check", str(path), "--json", "--no-timing", "--timeout", TIMEOUT_S]
        + EAGER,
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == fault.exit_code, (fault.name, result.stderr[-2000:])
    report = json.loads(result.stdout)
    assert_reported(fault, report)
    if fault.exit_code == 2:
        (line,) = result.stderr.strip().splitlines()
        assert line.startswith("compile-playground: ")
    if fault.name == "spawns_child":
        pid = child_pid(tmp_path)
        assert pid is not None and not pid_alive(pid), "the snippet's child outlived the worker"


class WatchProcess:
    """`compile-playground watch --json-lines` on one file, its lines collected as they come."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "playground",
                "watch",
                str(path),
                "--json-lines",
                "--no-timing",
                "--timeout",
                TIMEOUT_S,
                *EAGER,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        self.lines: list[dict] = []
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            with self.cond:
                self.lines.append(json.loads(raw))
                self.cond.notify_all()

    def wait_complete(self, sha: str, timeout: float = 90) -> dict:
        end = time.monotonic() + timeout
        with self.cond:
            while True:
                for line in self.lines:
                    if line["stage"] == "complete" and line["content_sha256"] == sha:
                        return line
                if time.monotonic() > end:
                    raise AssertionError(
                        f"no complete line for {sha[:8]}; got {[ln['content_sha256'][:8] for ln in self.lines]}"
                    )
                self.cond.wait(0.5)

    def wait_error(self, predicate, start: int, timeout: float = 90) -> dict:
        end = time.monotonic() + timeout
        with self.cond:
            while True:
                for line in self.lines[start:]:
                    if line["stage"] == "complete" and predicate(line):
                        return line
                if time.monotonic() > end:
                    raise AssertionError("no matching line")
                self.cond.wait(0.5)

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(15)


@pytest.fixture(scope="module")
def watched(tmp_path_factory):
    folder = tmp_path_factory.mktemp("watched")
    path = folder / "snippet.py"
    path.write_text(GOOD)
    proc = WatchProcess(path)
    proc.wait_complete(hashlib.sha256(GOOD.encode()).hexdigest(), timeout=120)
    yield folder, path, proc
    proc.close()


def _save_good(path: Path, n: int) -> str:
    text = GOOD + f"# save {n}\n"
    if path.is_dir():
        path.rmdir()
    elif path.exists() or path.is_fifo():
        path.unlink()
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize("fault", FAULTS, ids=lambda f: f.name)
def test_watch_route_and_next_good_save(fault: Fault, watched):
    folder, path, proc = watched
    start = len(proc.lines)
    made = fault.make(folder)
    assert made == path or fault.name in ("spawns_child", "deletes_itself")
    if path.is_file():
        sha = hashlib.sha256(path.read_bytes()).hexdigest()
        report = proc.wait_complete(sha) if fault.name != "deletes_itself" else None
    else:
        report = None
    if fault.name == "deletes_itself":
        # Its own deletion is a newer change: the run that worked may be superseded by one that
        # says the file is gone, which is the current truth. Either is right; nothing else is.
        line = proc.wait_error(lambda ln: ln["error"] is None or "no such file" in ln["error"]["message"], start)
        assert line["error"] is None or line["error"]["kind"] == "snippet"
        sha = _save_good(path, FAULTS.index(fault))
        assert proc.wait_complete(sha)["error"] is None
        return
    if report is None:
        report = proc.wait_error(
            lambda line: (
                line["error"] is not None
                and all(w in f"{line['error']['type']}: {line['error']['message']}" for w in fault.words)
            ),
            start,
        )
    assert_reported(fault, report)
    sha = _save_good(path, FAULTS.index(fault))
    good = proc.wait_complete(sha)
    assert good["error"] is None and good["graph_count"] == 1 and good["equivalence"]["ok"]
