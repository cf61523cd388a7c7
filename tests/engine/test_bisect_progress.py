"""A bisection's progress line: where torch's bisector stands, and, once it halves a range, the
most steps the bisection can take. The bound is checked against torch's own halving rule
(CompilerBisector.process_subsystem: midpoint (low + high) // 2, a passing step keeps
midpoint + 1..high, a failing one low..midpoint), simulated for every culprit in every range."""

from __future__ import annotations

import json

import pytest

from playground.engine.bisecting import read_line
from playground.engine.events import BisectProgress
from playground.worker.run.bisection.search import at_most, progress


def _halvings(low: int, high: int, culprit: int) -> int:
    """Steps torch's binary search takes on low..high when application `culprit` is the first
    bad one (a step passes when every application up to the midpoint is good)."""
    steps = 0
    while low != high:
        steps += 1
        midpoint = (low + high) // 2
        if midpoint < culprit:
            low = midpoint + 1
        else:
            high = midpoint
    return steps


@pytest.mark.parametrize("size", [*range(2, 40), 64, 65, 1000])
def test_at_most_is_the_longest_search_torchs_rule_can_take(size: int) -> None:
    low, high, done = 3, 3 + size - 1, 6
    longest = max(_halvings(low, high, culprit) for culprit in range(low, high + 1))
    # Sent as step done + 1 starts: that step is the first halving.
    assert at_most(done + 1, {"state": "bisect", "low": low, "high": high}) == done + longest


@pytest.mark.parametrize("state", [None, "test_disable", "find_max_bounds"])
def test_no_bound_before_a_range_is_halved(state: str | None) -> None:
    assert at_most(4, {"state": state, "low": None, "high": None}) is None


def test_a_progress_line_says_the_step_its_bound_and_the_range() -> None:
    raw = (
        '{"event": "progress", "steps": 9, "at_most": 12, "stage": "inductor",'
        ' "subsystem": "post_grad_passes", "state": "bisect", "low": 0, "high": 7}'
    )
    kind, step = read_line(raw)
    assert kind == "progress" and step == BisectProgress(9, "inductor", "post_grad_passes", 0, 7, "bisect", None, 12)
    assert step.words() == "step 9 of at most 12: inductor post_grad_passes, range 0..7"


def test_before_halving_a_line_says_what_the_step_tries() -> None:
    assert BisectProgress(1, "eager").words() == "step 1: try backend eager"
    change = BisectProgress(5, "inductor", "inductor_fallback_random", state="test_disable", change="inductor.x=True")
    assert change.words() == "step 5: inductor: try inductor.x=True"
    off = BisectProgress(4, "inductor", "post_grad_passes", state="test_disable")
    assert off.words() == "step 4: inductor: try without post_grad_passes"


def test_an_error_without_a_known_phase_is_the_tools_own() -> None:
    assert read_line('{"event": "error", "message": "state gone"}') == ("error", "worker error: state gone")


def test_the_worker_sends_a_step_in_the_lines_shape_and_every_reader_gets_it_back() -> None:
    where = {"stage": "inductor", "subsystem": "post_grad_passes", "state": "bisect", "change": None}
    sent = progress(9, {**where, "low": 0, "high": 7}).to_dict()
    assert sent == json.loads(
        '{"event": "progress", "steps": 9, "at_most": 11, "stage": "inductor", "subsystem": "post_grad_passes",'
        ' "state": "bisect", "change": null, "low": 0, "high": 7}'
    )
    assert read_line(json.dumps(sent)) == ("progress", BisectProgress.from_dict(sent))
    assert BisectProgress.from_dict(sent).to_dict() == sent


def test_a_progress_field_of_the_wrong_type_reads_as_absent() -> None:
    read = BisectProgress.from_dict({"event": "progress", "steps": True, "low": "0", "high": 7.0, "stage": 3})
    assert read == BisectProgress(0)
    assert BisectProgress.from_dict({"event": "result"}) is None
