"""Fixes tried, through the real worker: the variants stream as each ends, the report holds them
all best first, the user's file is never written, and a cancel mid-variants kills every variant
process while the worker goes on serving. What each remedy does is tests/test_gallery_fixes.py's
(against a plain python run); the candidates' rules on canned reports are test_fixes_unit.py's."""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from playground.engine.client import RunCancelled
from playground.engine.events import FixEvent
from playground.engine.passes import Passes
from playground.engine.sync import SyncWorker
from tests.processes import is_live
from tests.requests import request_for

from .conftest import EAGER

GALLERY = Path(__file__).resolve().parents[2] / "snippets"
FIXES = Passes(fixes="all")


def test_each_variant_streams_as_it_ends_and_the_report_holds_them_all(worker: SyncWorker) -> None:
    events: list[Any] = []
    path = GALLERY / "fix_shape_recompile.py"
    report = worker.run(request_for(str(path), EAGER, timing=False, passes=FIXES), events.append).report
    tried = [e for e in events if isinstance(e, FixEvent)]
    # The run's own report first (the app shows it at once), then one event per remedy.
    assert tried[0].report is not None and tried[0].fix is None
    streamed = [e.fix for e in tried[1:]]
    assert all(f is not None for f in streamed) and len(streamed) == len(report.fixes) >= 2
    assert sorted(f.remedy for f in streamed if f) == sorted(f.remedy for f in report.fixes)
    assert [f.achieves() for f in report.fixes] == sorted(f.achieves() for f in report.fixes)
    # The run itself is the run without the change: its counts are the report's.
    assert (tried[0].report.graph_count, tried[0].report.recompile_count) == (
        report.graph_count,
        report.recompile_count,
    )


def test_the_users_file_is_never_written(worker: SyncWorker, tmp_path: Path) -> None:
    path = tmp_path / "helper.py"
    text = (GALLERY / "fix_helper.py").read_text(encoding="utf-8")
    path.write_text(text, encoding="utf-8")
    before = (path.stat().st_mtime_ns, sorted(os.listdir(tmp_path)))
    report = worker.run(request_for(str(path), EAGER, timing=False, passes=FIXES)).report
    assert report.fixes, report.error
    assert path.read_text(encoding="utf-8") == text
    assert (path.stat().st_mtime_ns, sorted(os.listdir(tmp_path))) == before


def test_a_run_without_breaks_or_recompiles_tries_nothing(worker: SyncWorker) -> None:
    report = worker.run(request_for(str(GALLERY / "pure_function.py"), EAGER, timing=False, passes=FIXES)).report
    assert report.error is None and report.graph_break_count == 0 and report.recompile_count == 0
    assert report.fixes == () and report.fix_advice == () and "fixes" not in report.to_dict()


def test_under_fullgraph_the_refused_break_is_the_site_and_a_remedy_lets_it_compile(worker: SyncWorker) -> None:
    """fullgraph=True stops the run at its break: that break is what the user wants gone, so it
    is the one site tried, under the same fullgraph, and the remedy that removes it compiles."""
    settings = replace(EAGER, fullgraph=True)
    report = worker.run(request_for(str(GALLERY / "fix_print.py"), settings, timing=False, passes=FIXES)).report
    assert report.error is not None and report.error.refused is not None
    line = report.error.refused.line
    assert report.fixes, "no remedy tried for the break fullgraph refused"
    assert {f.target.line for f in report.fixes} == {line}
    removed = [f for f in report.fixes if f.removed]
    assert removed, [(f.remedy, f.error) for f in report.fixes]
    best = removed[0]
    assert best.error is None and best.after is not None and best.after.graph_break_count == 0
    # The run without the change stopped before its prints: they are not compared with it.
    assert best.prints == ""


#: Each process that loads it (the run, its eager reference, every variant and theirs) writes
#: its pid; every call sleeps, so that the variants are still running when the test cancels.
SLOW = """\
import os
import time

import torch

with open({pids!r}, "a") as fh:
    fh.write(f"{{os.getpid()}}\\n")


def fn(x):
    print("call")
    time.sleep(1.5)
    return x * 2


def inputs():
    yield torch.randn(3)
"""


def test_a_cancel_during_the_variants_kills_every_variant_and_the_worker_serves_on(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    path = tmp_path / "slow.py"
    path.write_text(SLOW.format(pids=str(pids)), encoding="utf-8")
    with SyncWorker(timeout_s=120) as w:
        w.start()
        template = w.client.hello.pid
        pool = ThreadPoolExecutor(max_workers=1)
        future = pool.submit(w.run, request_for(str(path), EAGER, timing=False, passes=FIXES))
        pool.shutdown(wait=False)

        def loaded() -> list[int]:
            return [int(x) for x in pids.read_text().split()] if pids.exists() else []

        # The run and its eager reference load it first; a third pid is a variant's.
        deadline = time.monotonic() + 90
        while len(loaded()) < 3 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(loaded()) >= 3, "no variant started"
        w.cancel()
        with pytest.raises(RunCancelled):
            future.result(30)
        deadline = time.monotonic() + 10
        while any(is_live(p) for p in loaded()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [p for p in loaded() if is_live(p)], "a variant outlived the cancel"
        again = w.run(request_for(str(GALLERY / "pure_function.py"), EAGER, timing=False)).report
        assert again.error is None and w.client.hello.pid == template


def test_reorderable_logging_is_a_config_key_the_settings_can_name(worker: SyncWorker) -> None:
    """The print remedy as a session toggle: torch's set of functions, named ("print"); an
    unknown name is a settings error naming it."""
    from dataclasses import replace

    default = str(GALLERY / "default.py")
    plain = worker.run(request_for(default, EAGER, timing=False)).report
    named = replace(EAGER, config=(("dynamo.reorderable_logging_functions", ("print",)),))
    moved = worker.run(request_for(default, named, timing=False)).report
    assert plain.graph_break_count >= 1 and moved.graph_break_count == 0 and moved.error is None
    assert moved.output.text == plain.output.text  # the print still prints, with the same values
    wrong = replace(EAGER, config=(("dynamo.reorderable_logging_functions", ("nosuch",)),))
    error = worker.run(request_for(default, wrong, timing=False)).report.error
    assert error is not None and error.kind == "settings" and "nosuch" in error.message


def test_the_worker_ended_mid_variants_keeps_the_runs_report_and_the_fixes_that_came() -> None:
    """SIGTERM to the template once the first remedy's result is in: the template's shutdown
    kills every variant, and the client keeps the run's own report, the remedies that came, and
    a note saying the rest were not tried."""
    import signal
    import subprocess
    import threading

    with SyncWorker(timeout_s=120) as w:
        w.start()
        template = w.client.hello.pid
        first = threading.Event()

        def on_event(event: Any) -> None:
            if isinstance(event, FixEvent) and event.fix is not None:
                first.set()

        pool = ThreadPoolExecutor(max_workers=1)
        request = request_for(str(GALLERY / "fix_helper.py"), EAGER, timing=False, passes=FIXES)
        future = pool.submit(w.run, request, on_event)
        pool.shutdown(wait=False)
        assert first.wait(120), "no remedy's result came"
        seen = [
            int(p)
            for p in subprocess.run(["pgrep", "-P", str(template)], capture_output=True, text=True).stdout.split()
        ]
        os.kill(template, signal.SIGTERM)
        report = future.result(60).report
        assert report.error is None and report.graph_break_count == 2
        assert len(report.fixes) >= 1 and any(n.startswith("fixes not tried to the end") for n in report.notes)
        deadline = time.monotonic() + 10
        while any(is_live(p) for p in [template, *seen]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not [p for p in [template, *seen] if is_live(p)]
