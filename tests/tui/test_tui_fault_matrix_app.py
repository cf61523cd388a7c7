"""The fault matrix through the app (the third route; `check` and `watch` are in
tests/test_fault_matrix.py): every bad snippet saved into a watched file, on one app session
with the real torch worker and the real file watcher (in three parts, so that pytest-xdist
can spread them).

For each fault the app must show the one-line cause (and the line) in the summary bar and
the Source pane, answer keys while showing it, and the next good save must bring back a
correct, current result. One app and one worker serve each part's faults: a fresh worker per
fault would cost seconds each.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import Static
from tui_fakes import bar_text, plain

from playground.engine.client import WorkerClient
from playground.engine.settings import Settings
from tests.faults import FAULTS, GOOD, Fault, child_pid, pid_alive, save_good
from tui.factory import make_app

#: The run timeout: the infinite loop is killed after this many seconds.
RUN_TIMEOUT_S = 5
#: The longest a run may take to show, a worker restart (torch import on 2 cores) included.
SHOW_TIMEOUT_S = 60.0
#: How long the snippet's child may take to die once the app has closed its worker.
CHILD_GONE_S = 5.0
SIZE = (100, 30)  # narrow: every pane is a tab, so the tab keys switch tabs

#: Lines as right as the fault's own (none today: the infinite loop is one line).
LINES: dict[str, set[int]] = {}


class WorkerClientQuickTimings(WorkerClient):
    """The real client; only the timing phase is shortened (0.05 s a side, not 0.2 s), which
    saves some ten seconds over the matrix's fifty runs."""

    async def run(self, request, on_event=None):  # type: ignore[override]
        quick = dataclasses.replace(request.flags, min_run_time=0.05)
        return await super().run(dataclasses.replace(request, flags=quick), on_event)


def sha_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def wide_text(app, widget_id: str) -> str:
    """A pane or bar as plain text, wide enough that no message wraps, whitespace squeezed."""
    if widget_id.startswith("pane-"):
        return " ".join(plain(app.main.deck.body(widget_id.removeprefix("pane-")), width=400).split())
    widget = app.main.query_one(f"#{widget_id}")
    static = widget if isinstance(widget, Static) else widget.query_one(Static)
    return " ".join(plain(static.content, width=400).split())


def describe(app) -> str:
    view = app.main.view
    attempt = view.attempt
    error = attempt.error if attempt is not None else None
    report = view.report
    return (
        f"run={view.run}; attempt sha={attempt.content_sha256[:8] if attempt else None} error={error}; "
        f"report sha={report.content_sha256[:8] if report else None} stale={view.stale}"
    )


async def wait_until(pilot, predicate: Callable[[], bool], what: str, timeout: float = SHOW_TIMEOUT_S) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}; {describe(pilot.app)}")
        await pilot.pause(0.05)


def finished(app, sha: str) -> bool:
    """The newest run is over and it ran exactly these bytes."""
    view = app.main.view
    return view.attempt is not None and view.attempt.content_sha256 == sha and view.run.kind in ("done", "error")


async def assert_responsive(pilot, name: str) -> None:
    """Tab keys switch tabs at once while the fault is shown."""
    main = pilot.app.main
    for key, tab in (("2", "breaks"), ("9", "output"), ("1", "source")):
        started = time.monotonic()
        await pilot.press(key)
        await wait_until(pilot, lambda tab=tab: main.deck.current == tab, f"{name}: key {key} to show {tab}", timeout=5)
        assert time.monotonic() - started < 5, f"{name}: key {key} took {time.monotonic() - started:.1f} s"


def assert_app_reports(app, fault: Fault, sha: str) -> None:
    """What the app shows for the run of `fault` (whose bytes hash to `sha`)."""
    name = fault.name
    view = app.main.view
    attempt = view.attempt
    assert attempt is not None and attempt.content_sha256 == sha, f"{name}: {describe(app)}"
    summary = bar_text(app)
    if fault.kind is None:
        assert view.error is None, f"{name}: must succeed, got {view.error}"
        assert view.run.kind == "done", f"{name}: {view.run}"
        assert view.report is attempt and not view.stale, f"{name}: {describe(app)}"
        assert "STALE" not in summary and "done" in summary, f"{name}: summary {summary!r}"
        if fault.extra is not None:
            fault.extra(attempt.to_dict())  # the checks read the JSON contract, shared with check --json
        return
    error = view.error
    assert error is not None, f"{name}: expected a {fault.kind} error, got none; {describe(app)}"
    assert error.kind == fault.kind, f"{name}: kind {error.kind!r}, expected {fault.kind!r}: {error}"
    assert "\n" not in error.message, f"{name}: the cause is not one line: {error.message!r}"
    cause = f"{error.type}: {error.message}"
    for word in fault.words:
        assert word in cause, f"{name}: {word!r} not in the cause {cause!r}"
    if fault.line is not None:
        lines = LINES.get(name, {fault.line})
        assert error.line in lines, f"{name}: line {error.line}, expected one of {sorted(lines)}"
    assert view.run.kind == "error", f"{name}: {view.run}"
    # The summary bar: who failed, where, and the exception type.
    where = f" at line {error.line}" if fault.line is not None else ""
    assert f"error: {fault.kind} error{where}: {error.type}" in summary, f"{name}: summary {summary!r}"
    # The Source pane heads with the whole one-line cause; the Output pane repeats it.
    source = wide_text(app, "pane-source")
    assert f"ERROR ({fault.kind} error){where}: " in source, f"{name}: source pane {source[:300]!r}"
    for word in fault.words:
        assert word in source, f"{name}: {word!r} not in the source pane {source[:300]!r}"
    output = wide_text(app, "pane-output")
    assert " ".join(cause.split()) in output, f"{name}: cause not in the output pane {output[-300:]!r}"


async def assert_good_save(pilot, path: Path, n: int, name: str) -> None:
    app = pilot.app
    sha = save_good(path, n)
    await wait_until(
        pilot,
        lambda: finished(app, sha) and app.main.view.run.kind == "done",
        f"the good save after {name} ({sha[:8]}) to finish",
    )
    view = app.main.view
    assert view.error is None and view.report is view.attempt, f"after {name}: {describe(app)}"
    assert not view.stale, f"after {name}: the good result is marked stale"
    assert view.report.graph_count == 1, f"after {name}: graphs {view.report.graph_count}"
    assert view.report.equivalence is not None and view.report.equivalence.ok, f"after {name}"
    summary = bar_text(app)
    assert "graphs 1  breaks 0" in summary and "STALE" not in summary, f"after {name}: summary {summary!r}"
    assert "ERROR" not in wide_text(app, "pane-source"), f"after {name}: the source pane still shows an error"


async def run_fault(pilot, folder: Path, fault: Fault) -> None:
    app = pilot.app
    path = folder / "snippet.py"
    made = fault.make(folder)
    assert made == path, f"{fault.name}: wrote {made}, not the watched path"
    if fault.name == "deletes_itself":
        # Its own deletion is a newer change: the run that worked may be superseded by the
        # file being gone, which is then the current truth. Either is right; nothing else is.
        sha = sha_of(path)
        await wait_until(pilot, lambda: not path.exists(), "the snippet to delete itself")
        await wait_until(
            pilot,
            lambda: app.main.view.run.kind == "missing" or (finished(app, sha) and app.main.view.error is None),
            "deletes_itself: the run or the deletion to show",
        )
        if app.main.view.run.kind == "missing":
            assert "snippet.py not found" in bar_text(app), bar_text(app)
    elif not path.is_file():
        # A directory or FIFO: no content hash to wait for, so wait for the verdict itself.
        await wait_until(pilot, lambda: app.main.view.run.kind in ("missing", "error"), f"{fault.name} to show")
        error = app.main.view.error
        shown = f"{bar_text(app)} {wide_text(app, 'pane-source')}"
        for word in fault.words:
            assert word in shown, f"{fault.name}: {word!r} not shown; summary {bar_text(app)!r}; error {error}"
        assert error is not None and error.kind == fault.kind, f"{fault.name}: {describe(app)}"
    else:
        sha = sha_of(path)
        await wait_until(pilot, lambda: finished(app, sha), f"{fault.name} ({sha[:8]}) to finish")
        assert_app_reports(app, fault, sha)
    await assert_responsive(pilot, fault.name)
    await assert_good_save(pilot, path, FAULTS.index(fault), fault.name)


async def session(folder: Path, faults: list[Fault]) -> None:
    path = folder / "snippet.py"
    path.write_text(GOOD)
    # Backend eager throughout: the faults are about bad input, and a cold Inductor compile on a
    # fresh machine can outlast the 5 s run timeout.
    app = make_app(
        path,
        engine=WorkerClientQuickTimings(timeout_s=RUN_TIMEOUT_S),
        settings=Settings(backend="eager"),
        watch=True,
    )
    app.animation_level = "none"  # a tab switch animates its underline; Pilot waits it out
    async with app.run_test(size=SIZE) as pilot:
        sha = sha_of(path)
        await wait_until(pilot, lambda: finished(app, sha), "the first run of the good snippet", timeout=120)
        assert app.main.view.error is None, describe(app)
        for fault in faults:
            await run_fault(pilot, folder, fault)
    pid = child_pid(folder)
    if pid is not None:
        # Killed with the worker's process group as the app closes; SIGKILL lands asynchronously,
        # so allow a loaded machine a moment to finish the kill.
        deadline = time.monotonic() + CHILD_GONE_S
        while pid_alive(pid) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert not pid_alive(pid), f"the snippet's child process {pid} outlived the app and its worker"


#: The faults in this many app sessions, each with its own worker: one session of all of them
#: is a minute-long test that pytest-xdist cannot share between its workers.
PARTS = 3


@pytest.mark.parametrize("part", range(PARTS))
async def test_every_fault_through_the_app(tmp_path: Path, part: int):
    faults = list(FAULTS[part::PARTS])
    await session(tmp_path, faults)
    if any(fault.name == "spawns_child" for fault in faults):
        assert child_pid(tmp_path) is not None, "spawns_child never ran"


def test_the_parts_hold_every_fault():
    assert sorted(f.name for part in range(PARTS) for f in FAULTS[part::PARTS]) == sorted(f.name for f in FAULTS)
