"""The fault matrix: every bad snippet through `check` and `watch --json-lines` (the app's route
is in tests/tui/test_tui_fault_matrix_app.py). Each must give a one-line cause naming the problem
(and its line), `check`'s documented exit code, and leave the next good save working."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from playground.cli.checkcmd import exit_code
from playground.cli.main import parse
from playground.engine.report import Report
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


@dataclass(frozen=True)
class Checked:
    """One `check` of every fault at once: each fault's path, the report printed for it (in the
    order given, one JSON line each), its stderr line, and the command's exit code."""

    paths: dict[str, Path]
    reports: dict[str, dict]
    stderr: list[str]
    returncode: int


@pytest.fixture(scope="module")
def checked(tmp_path_factory) -> Checked:
    """All the faults through one `check` process: one torch start-up instead of one per fault.
    Each run is still a fresh child of the worker's template (what a `check` of that file alone
    runs in), and every fault after the first also shows the worker survived the one before."""
    root = tmp_path_factory.mktemp("faults")
    paths = {}
    for fault in FAULTS:
        folder = root / fault.name
        folder.mkdir()
        paths[fault.name] = fault.make(folder)
    result = subprocess.run(
        [sys.executable, "-m", "playground", "check", *map(str, paths.values()), "--json", "--no-timing"]
        + ["--timeout", TIMEOUT_S, *EAGER],
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )
    lines = result.stdout.splitlines()
    assert len(lines) == len(FAULTS), (result.returncode, result.stderr[-2000:])
    reports = {fault.name: json.loads(line) for fault, line in zip(FAULTS, lines)}
    return Checked(paths, reports, result.stderr.splitlines(), result.returncode)


@pytest.mark.parametrize("fault", FAULTS, ids=lambda f: f.name)
def test_check_route(fault: Fault, checked: Checked):
    report = checked.reports[fault.name]
    assert_reported(fault, report)
    args = parse("check", [str(checked.paths[fault.name])])
    assert exit_code(Report.from_dict(report), args) == fault.exit_code, (fault.name, report["error"])
    # Several snippets: each error is one stderr line that names its file.
    said = [line for line in checked.stderr if line.startswith(f"compile-playground: {checked.paths[fault.name]}: ")]
    assert len(said) == (1 if fault.exit_code == 2 else 0), (fault.name, checked.stderr)
    if fault.name == "spawns_child":
        pid = child_pid(checked.paths[fault.name].parent)
        assert pid is not None and not pid_alive(pid), "the snippet's child outlived the worker"


def test_check_route_exits_with_the_worst_code(checked: Checked):
    assert checked.returncode == max(fault.exit_code for fault in FAULTS) == 2
    assert all(line.startswith("compile-playground: ") for line in checked.stderr), checked.stderr


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
        # A run of the deleting bytes still in flight (a second file event for the same write)
        # would delete the good file saved next, as its module code runs: let it end first.
        proc.wait_quiet(3.0)
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
