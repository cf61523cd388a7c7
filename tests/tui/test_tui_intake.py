"""Where the engine's typed values enter the UI: escaped once, turned into the app's messages."""

from __future__ import annotations

from tui_fakes import load_fixture

from playground.engine import events
from playground.engine.report import Report
from tui.engine.intake import event_message, visible_report
from tui.engine.messages import DiagnosticsReady, Progress, WorkerRestarted

ESC = "\x1b[2J"


def test_a_clean_report_comes_back_as_the_same_object():
    report = Report.from_dict(load_fixture("break"))
    assert visible_report(report) is report


def test_every_string_of_a_report_is_escaped_and_the_rest_kept():
    raw = load_fixture("break")
    raw["graph_breaks"][0]["reason"] = f"bad {ESC}"
    raw["output"] = {"text": f"printed {ESC}", "bytes": 9, "truncated": False}
    raw["timings"]["cache_counts"] = {f"k{ESC}": 1}
    report = visible_report(Report.from_dict(raw))
    assert report.graph_breaks[0].reason == "bad ␛[2J"
    assert report.output.text == "printed ␛[2J" and report.output.bytes == 9
    assert dict(report.timings.cache_counts) == {"k␛[2J": 1}
    assert "\x1b" not in repr(report.to_dict())
    assert report.graph_breaks[1:] == Report.from_dict(raw).graph_breaks[1:]


def test_engine_events_become_the_app_messages_of_their_run():
    progress = event_message(7, events.ProgressEvent("compiling", 1, 3, f"go {ESC}"))
    assert progress == Progress(7, "compiling", 1, 3, "go ␛[2J")
    restarted = event_message(7, events.RestartEvent(f"died {ESC}"))
    assert restarted == WorkerRestarted(7, "died ␛[2J")
    report = Report.from_dict(load_fixture("break"))
    ready = event_message(7, events.DiagnosticsEvent(report))
    assert isinstance(ready, DiagnosticsReady) and ready.generation == 7 and ready.report is report
