"""The fault matrix: every bad snippet through `check` and `watch --json-lines` (the app's route
is in tests/tui/test_tui_fault_matrix_app.py). Each must give a one-line cause naming the problem
(and its line), `check`'s documented exit code, and leave the next good save working."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.faults import FAULTS, GOOD, Fault, child_pid, pid_alive, save_good
from tests.watching import WatchProcess

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


@pytest.fixture(scope="module")
def watched(tmp_path_factory):
    folder = tmp_path_factory.mktemp("watched")
    path = folder / "snippet.py"
    path.write_text(GOOD)
    proc = WatchProcess(path, "--timeout", TIMEOUT_S, *EAGER)
    proc.wait_complete(hashlib.sha256(GOOD.encode()).hexdigest(), timeout=120)
    yield folder, path, proc
    proc.close()


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
        line = proc.wait_line(
            lambda ln: ln["error"] is None or "no such file" in ln["error"]["message"], fault.name, start
        )
        assert line["error"] is None or line["error"]["kind"] == "snippet"
        sha = save_good(path, FAULTS.index(fault))
        assert proc.wait_complete(sha)["error"] is None
        return
    if report is None:
        report = proc.wait_line(
            lambda line: (
                line["error"] is not None
                and all(w in f"{line['error']['type']}: {line['error']['message']}" for w in fault.words)
            ),
            fault.name,
            start,
        )
    assert_reported(fault, report)
    sha = save_good(path, FAULTS.index(fault))
    good = proc.wait_complete(sha)
    assert good["error"] is None and good["graph_count"] == 1 and good["equivalence"]["ok"]
