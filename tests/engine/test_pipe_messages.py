"""The progress message's one shape on the worker's pipe (playground/engine/events.py
`Progress`): what every sender builds, read back by name by every reader; a field of the wrong
type (a line a snippet forged on the descriptor) reads as absent, never as a crash."""

from __future__ import annotations

import json

from playground.engine.events import Progress, ProgressEvent, Tracing
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
