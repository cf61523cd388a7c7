"""The findings lane: under a slow backend, Dynamo's findings (graphs, breaks, guards,
recompiles) arrive from a process beside the run, made with backend eager, before the complete
report, and equal it; no lane where it would not be first (eager, a save of code already
compiled) or where nobody asked. Real worker, real Inductor."""

from __future__ import annotations

import dataclasses
import time

import pytest

from playground.cli.textreport import render, render_findings
from playground.engine.events import FindingsEvent, RunEvent
from playground.engine.findings import CompiledBefore, changed, lane_wanted, superseded
from playground.engine.report import EntryGuards, Explanation, Report
from playground.engine.settings import Settings
from playground.worker.capture.explain.guards import parse_guard
from tests.requests import request_for

pytestmark = pytest.mark.inductor

#: A break and a recompile: every section the lane reports has something in it.
BREAK_AND_RECOMPILE = """
import torch

SCALE = {scale}

def fn(x):
    y = torch.nn.functional.gelu(x) * SCALE
    if y.sum() > 0:
        return y.cos()
    return y.sin()

def inputs():
    torch.manual_seed(0)
    return [torch.randn(16, 8), torch.randn(24, 8)]
"""


def _run(worker, path: str, settings: Settings, *, early: bool = True) -> tuple[list[tuple[str, object]], Report]:
    """The run's events in arrival order (a findings event, and the complete report last)."""
    request = request_for(path, settings, timing=False)
    request = dataclasses.replace(request, flags=dataclasses.replace(request.flags, early_findings=early))
    arrived: list[tuple[str, object]] = []

    def on_event(event: RunEvent) -> None:
        if isinstance(event, FindingsEvent):
            arrived.append(("findings", event.report))

    report = worker.run(request, on_event).report
    arrived.append(("complete", report))
    return arrived, report


def test_under_inductor_the_findings_arrive_before_the_complete_report_and_equal_it(worker, snippet):
    # dynamic=False: the recompile is a static one, whose guards Inductor adds nothing to.
    path = snippet(BREAK_AND_RECOMPILE.format(scale=1.5))
    arrived, report = _run(worker, path, Settings(backend="inductor", dynamic=False))
    assert [kind for kind, _ in arrived] == ["findings", "complete"]
    findings = arrived[0][1]
    assert isinstance(findings, Report)
    assert report.error is None, report.error
    assert findings.stage == "findings" and findings.settings == report.settings
    assert findings.content_sha256 == report.content_sha256
    # What torch did is in it, not an empty report that trivially matches.
    assert report.graph_break_count >= 1 and report.recompile_count >= 1 and report.guards
    assert changed(findings, report) == ()
    assert superseded(findings, report) == ""
    assert findings.equivalence is None and findings.timings is None
    # watch's text form of them: which part still compiles, the counts, and the same break
    # lines as the complete report's.
    text = render_findings(findings)
    assert text.startswith("findings shown; inductor compiling... Dynamo's findings:")
    assert f"breaks {report.graph_break_count}  recompiles {report.recompile_count}" in text
    break_lines = [line for line in text.splitlines() if line.startswith("  ")]
    assert break_lines and all(line in render(report).splitlines() for line in break_lines)


def test_where_inductor_adds_a_guard_the_complete_report_says_the_findings_differ(worker, snippet):
    # Automatic dynamic: the recompiled graph is dynamic, and Inductor's C++ codegen bounds
    # the size it made dynamic (a guard eager's trace never has).
    path = snippet(BREAK_AND_RECOMPILE.format(scale=6.5))
    arrived, report = _run(worker, path, Settings(backend="inductor"))
    assert [kind for kind, _ in arrived] == ["findings", "complete"]
    findings = arrived[0][1]
    assert isinstance(findings, Report)
    found = [g for s in findings.guards for g in s.guards]
    final = [g for s in report.guards for g in s.guards]
    if found == final:
        pytest.skip("this torch's Inductor adds no guard to the dynamic graph")
    assert changed(findings, report) == ("guards",)
    assert "guards" in superseded(findings, report) and "supersedes" in superseded(findings, report)


def test_a_comment_only_save_of_compiled_code_gets_no_lane_and_a_changed_constant_does(worker, snippet):
    path = snippet(BREAK_AND_RECOMPILE.format(scale=2.5))
    first, _ = _run(worker, path, Settings(backend="inductor"))
    assert [kind for kind, _ in first] == ["findings", "complete"]
    commented = snippet(BREAK_AND_RECOMPILE.format(scale=2.5) + "# only a comment\n")
    again, _ = _run(worker, commented, Settings(backend="inductor"))
    assert [kind for kind, _ in again] == ["complete"]
    changed_constant = snippet(BREAK_AND_RECOMPILE.format(scale=3.5))
    third, _ = _run(worker, changed_constant, Settings(backend="inductor"))
    assert [kind for kind, _ in third] == ["findings", "complete"]


def test_no_lane_for_eager_nor_for_a_run_that_did_not_ask(worker, snippet):
    path = snippet(BREAK_AND_RECOMPILE.format(scale=4.5))
    eager, _ = _run(worker, path, Settings(backend="eager"))
    assert [kind for kind, _ in eager] == ["complete"]
    unasked, _ = _run(worker, snippet(BREAK_AND_RECOMPILE.format(scale=5.5)), Settings(backend="inductor"), early=False)
    assert [kind for kind, _ in unasked] == ["complete"]


def test_the_rule_and_the_words(tmp_path):
    path = tmp_path / "s.py"
    path.write_text(BREAK_AND_RECOMPILE.format(scale=1.0))
    request = request_for(path, Settings(backend="inductor"), timing=False)
    asked = dataclasses.replace(request, flags=dataclasses.replace(request.flags, early_findings=True))
    before = CompiledBefore()
    assert not lane_wanted(request, before) and lane_wanted(asked, before)
    before.add(asked)
    assert not lane_wanted(asked, before)
    aot = request_for(path, Settings(backend="aot_eager"), timing=False)
    assert not lane_wanted(dataclasses.replace(aot, flags=asked.flags), CompiledBefore())
    findings = Report(graph_count=1, settings=Settings(backend="inductor"))
    complete = dataclasses.replace(findings, graph_count=2)
    assert changed(findings, complete) == ("graph_count",)
    assert "graphs 1 -> 2" in superseded(findings, complete)

    # An identity guard names an address, which two processes give differently for the same
    # object made after the fork (a library imported in each): the same check, not a change.
    def differ(first: str, second: str) -> tuple[str, ...]:
        # Each guard as the worker parses torch's line, compared as ranks compare them.
        def with_guard(body: str) -> Report:
            entry = EntryGuards("0/0", "fn", (parse_guard(body, str(path)),))
            return dataclasses.replace(findings, explanation=Explanation(guards=(entry,)))

        return changed(with_guard(first), with_guard(second))

    lane = "ID_MATCH: ___check_obj_id(G['m'].__code__, 140202027347424), type=<class 'code'>"
    run = "ID_MATCH: ___check_obj_id(G['m'].__code__, 140201959586400), type=<class 'code'>"
    other = "ID_MATCH: ___check_obj_id(G['n'].__code__, 140201959586400), type=<class 'code'>"
    assert differ(lane, run) == ()
    assert differ(lane, other) == ("guards",)
    # Dynamo's numbered globals count the names made in the process so far.
    numbered = "ID_MATCH: ___check_obj_id(G['__builtins_dict___24']['slice'], 94494947),"
    assert differ(numbered, numbered.replace("___24", "___36")) == ()
    assert differ(numbered, numbered.replace("'slice'", "'range'")) == ("guards",)
    by_id = "LAMBDA_GUARD: G['m'].torch.Tensor is G['_140022041650864_c12'].Tensor"
    assert differ(by_id, by_id.replace("_140022041650864_c12", "_139911107543168_c18")) == ()
    assert differ(by_id, by_id.replace(".Tensor", ".Size")) == ("guards",)
    # Torch's own guards count too: a backend's bound on a dynamic size is one.
    shape = "SHAPE_ENV: 2 <= L['x'].size()[0]"
    assert differ(shape, shape) == ()
    assert differ(shape, shape + " <= 4096") == ("guards",)


#: Each process that loads it writes when it loaded and with how many torch threads, and when it
#: has made its last call (its inputs() generator ends only when the next call is asked for).
RECORDING = """
import os, time, torch

LOG = {log!r}

def _say(what):
    with open(LOG, "a") as fh:
        fh.write(f"{{what}} {{os.getpid()}} {{torch.get_num_threads()}} {{time.monotonic()}}\\n")

_say("load")

def fn(x):
    return torch.nn.functional.gelu(x) * {scale}

def inputs():
    torch.manual_seed(0)
    yield torch.randn(16, 8)
    yield torch.randn(16, 8)
    _say("calls-done")
"""


def test_the_lane_loads_after_the_run_with_a_thread_fewer_and_the_eager_reference_after_the_lane(
    worker, snippet, tmp_path
):
    """The order that keeps the findings quick on few cores: the run's child loads first (what
    module-level code does once happens in that order), then the lane, on one torch thread fewer
    than the run (its parallel ops no longer wait for a core the run's child holds), and the
    eager reference only once the lane has made its calls."""
    log = tmp_path / "loads.log"
    # A constant no earlier run used: Inductor's on-disk cache would otherwise hand the run its
    # kernels at once, and the run would need the eager reference before the lane is done (its
    # fallback starts it then, as it should).
    path = snippet(RECORDING.format(log=str(log), scale=f"7.{time.time_ns()}"))
    arrived, report = _run(worker, path, Settings(backend="inductor"))
    assert [kind for kind, _ in arrived] == ["findings", "complete"]
    assert report.error is None and report.equivalence is not None and report.equivalence.ok
    rows = [line.split() for line in log.read_text().splitlines()]
    loads = [(int(pid), int(threads), float(at)) for what, pid, threads, at in rows if what == "load"]
    done = {int(pid): float(at) for what, pid, _, at in rows if what == "calls-done"}
    # The run's child, the lane, the eager reference (the float64 one is never asked here).
    assert len(loads) == 3, rows
    (run, run_threads, _), (lane, lane_threads, _), (ref, ref_threads, ref_loaded) = loads
    assert len({run, lane, ref}) == 3
    assert lane_threads == max(1, run_threads - 1) and ref_threads == run_threads
    assert ref_loaded > done[lane]
