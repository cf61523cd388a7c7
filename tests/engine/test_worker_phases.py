"""The experiment's phases as values: the diagnostics are read once and re-read only where the
capture grew, and the cache classification of the timing phase."""

from __future__ import annotations

import logging

from playground.engine.report import Graph
from playground.engine.settings import Settings
from playground.worker.capture import diagnostics
from playground.worker.capture.records import RunCapture
from playground.worker.capture.torchlog import LogRecord
from playground.worker.run.timing.timing import cache_word

BREAK = (
    "Graph break in user code at /snippet.py:3\n"
    "Graph Break Reason: Unsupported builtin print\n"
    "User code traceback:\n"
    '  File "/snippet.py", line 3, in fn\n'
)


def _break_record() -> LogRecord:
    return LogRecord("graph_breaks", BREAK, "[0/0] " + BREAK, "torch._dynamo", logging.DEBUG)


def test_nothing_new_reuses_the_diagnostics_read_for_the_event():
    capture = RunCapture(snippet_path="/snippet.py", records=[_break_record()])
    early = diagnostics.read(capture)
    assert early.report.graph_break_count == 1
    assert diagnostics.refresh(capture, early) is early


def test_an_unrelated_record_keeps_the_parsed_groups():
    capture = RunCapture(snippet_path="/snippet.py", records=[_break_record()])
    early = diagnostics.read(capture)
    capture.records.append(LogRecord(None, "chatter", "chatter", "torch._inductor", logging.DEBUG))
    later = diagnostics.refresh(capture, early)
    assert later.groups["records"] is early.groups["records"]
    assert later.groups["dynamo"] is early.groups["dynamo"]
    assert later.report.graph_breaks == early.report.graph_breaks


def test_a_break_logged_after_the_event_is_in_the_final_report():
    capture = RunCapture(snippet_path="/snippet.py", records=[_break_record()])
    early = diagnostics.read(capture)
    capture.records.append(_break_record())
    capture.graphs.append(Graph(index=1, compile_id="0/0", code="", op_count=0))
    later = diagnostics.refresh(capture, early)
    assert later.report.graph_break_count == 2
    assert later.report.graph_count == 1
    assert later.report == diagnostics.read(capture).report


def test_a_backward_compile_is_read_again():
    capture = RunCapture(snippet_path="/snippet.py")
    early = diagnostics.read(capture)
    capture.trace.append(({"inductor_output_code": {}, "frame_id": 0, "frame_compile_id": 0}, "code"))
    capture.graphs.append(Graph(index=1, compile_id="0/0", code="", op_count=0))
    later = diagnostics.refresh(capture, early)
    assert later.report.graphs[0].output_code == "code"


def test_cache_word():
    inductor = Settings(backend="inductor", cold=False)
    assert cache_word(Settings(backend="eager", cold=False), {"fxgraph_hit": 1}) == "n/a"
    assert cache_word(Settings(backend="inductor", cold=True), {}) == "disabled"
    assert cache_word(inductor, {"fxgraph_hit": 2}) == "hit"
    assert cache_word(inductor, {"fxgraph_miss": 1}) == "miss"
    assert cache_word(inductor, {"fxgraph_hit": 1, "autograd_miss": 1}) == "partial"
    assert cache_word(inductor, {}) == "n/a"
