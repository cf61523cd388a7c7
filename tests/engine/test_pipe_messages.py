"""The worker's pipe messages in their one shape each (playground/engine/events.py): `Progress`
and `RunEnded`, what every sender builds, read back by name by every reader; a field of the
wrong type (a line a snippet forged on the descriptor) reads as absent, never as a crash."""

from __future__ import annotations

import json

from playground.engine.events import Progress, ProgressEvent, RunEnded, Tracing
from playground.engine.lines import encode


def test_a_progress_message_reads_back_as_it_was_sent() -> None:
    sent = Progress("compiling", 2, 3, "compiling call 2/3", Tracing(41, 7), run_id=9)
    assert Progress.from_dict(json.loads(encode(sent.to_dict()))) == sent


def test_what_the_client_shows_is_the_step_call_and_words() -> None:
    assert Progress("timing", None, 3, "timing").event() == ProgressEvent("timing", None, 3, "timing")


def test_the_id_is_left_out_until_the_child_stamps_it() -> None:
    assert "id" not in Progress("loading").to_dict()
    assert "tracing" not in Progress("loading").to_dict()
    assert Progress("loading", run_id=4).to_dict()["id"] == 4


def test_another_message_is_not_progress() -> None:
    assert Progress.from_dict({"event": "diagnostics", "phase": "compiling"}) is None


def test_forged_fields_read_as_absent() -> None:
    forged = {"event": "progress", "phase": None, "call": "2", "calls": True, "message": 5, "tracing": {"line": "x"}}
    read = Progress.from_dict(forged)
    assert read is not None
    assert (read.phase, read.call, read.calls, read.message, read.tracing) == ("", None, None, "5", None)


def test_a_run_ended_message_reads_back_from_the_templates_status() -> None:
    error = {"kind": "snippet", "type": "IndexError", "message": "index 9 is out of bounds", "line": 7}
    status = {"pid": 41, "signal": "SIGABRT", "eager_failure": {"failed_call": 2, "error": error}}
    ended = RunEnded.of("died", status, run_id=3)
    assert (ended.outcome, ended.pid, ended.signal, ended.returncode) == ("died", 41, "SIGABRT", None)
    assert (ended.eager_failed_call, ended.eager_error, ended.run_id) == (2, error, 3)
    assert RunEnded.from_dict(json.loads(encode(ended.to_dict()))) == ended


def test_a_clean_exit_has_its_code_and_no_signal() -> None:
    ended = RunEnded.of("ok", {"pid": 5, "returncode": 0})
    assert ended.to_dict()["returncode"] == 0
    assert "signal" not in ended.to_dict()
    assert RunEnded.from_dict(ended.to_dict()) == ended


def test_a_forged_eager_failure_is_none() -> None:
    ended = RunEnded.from_dict({"event": "ended", "outcome": "died", "eager_failure": {"failed_call": "1", "error": 3}})
    assert ended is not None
    assert (ended.eager_failed_call, ended.eager_error) == (None, None)
    assert RunEnded.from_dict({"event": "report"}) is None
