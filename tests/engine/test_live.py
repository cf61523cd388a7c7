"""The live-run loop's logic (`playground.engine.live`), as `watch` and the app use it."""

from __future__ import annotations

from playground.engine.live import LiveRuns
from playground.engine.report import Report, RunError
from playground.engine.settings import Settings


def test_each_change_makes_the_run_in_flight_stale():
    runs = LiveRuns()
    runs.supersede()
    first = runs.generation
    runs.supersede()
    assert not runs.is_current(first) and runs.is_current(runs.generation)


def test_the_same_bytes_and_settings_run_once_unless_forced():
    runs = LiveRuns()
    assert runs.wanted("abc", Settings(), force=False)
    assert not runs.wanted("abc", Settings(), force=False)  # an editor's second write
    assert runs.wanted("abc", Settings(), force=True)
    assert runs.wanted("abc", Settings(fullgraph=True), force=False)
    runs.forget()
    assert runs.wanted("abc", Settings(fullgraph=True), force=False)


def test_a_trace_run_lost_to_a_newer_change_is_said():
    runs = LiveRuns()
    runs.supersede()
    runs.expect_trace()
    assert runs.supersede() is True  # lost: the caller says so
    assert not runs.take_trace(runs.generation)


def test_helpers_are_watched_after_a_good_run_and_every_module_after_a_failed_one(tmp_path):
    runs = LiveRuns()
    helper = str(tmp_path / "helper.py")
    assert runs.follow(Report(local_modules=(helper,))) == (helper,)
    failed = Report(error=RunError(kind="snippet", type="SyntaxError", message="bad"))
    assert runs.follow(failed) is None
    assert runs.wanted("abc", Settings(), force=False)  # after a failure, whatever changes next runs
