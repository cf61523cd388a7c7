"""The engine's lifecycle as the app sees it: the legal moves of its state machine, and the
refused ones."""

from __future__ import annotations

import pytest

from tui.engine.lifecycle import TRANSITIONS, EngineLifecycle, EngineState, IllegalTransition

HELLO = {"torch_version": "2.13.0+cpu"}


def test_a_start_then_quit():
    life = EngineLifecycle()
    assert life.state is EngineState.STARTING and life.hello is None and not life.ready
    assert life.started(HELLO)
    assert life.ready and life.hello == HELLO
    assert life.close() and life.closing
    assert not life.close(), "the engine is closed once"


def test_a_failed_start_is_retried_by_the_next_request():
    life = EngineLifecycle()
    assert not life.retry(), "nothing to retry while starting"
    assert life.start_failed() and life.state is EngineState.FAILED
    assert life.retry() and life.state is EngineState.STARTING
    assert life.started(HELLO) and life.ready


def test_nothing_comes_back_from_closing():
    life = EngineLifecycle()
    life.close()
    # A hello or a failure that lands while quitting changes nothing.
    assert not life.started(HELLO) and life.hello is None
    assert not life.start_failed() and not life.retry()
    assert life.state is EngineState.CLOSING


@pytest.mark.parametrize(
    ("path", "refused"),
    [
        ((), EngineState.STARTING),  # starting is only entered from a failed start
        ((EngineState.READY,), EngineState.STARTING),  # a ready worker is not started again
        ((EngineState.READY,), EngineState.FAILED),
        ((EngineState.FAILED,), EngineState.READY),  # a failed start is retried, never "ready"
        ((EngineState.CLOSING,), EngineState.READY),
        ((EngineState.CLOSING,), EngineState.CLOSING),
    ],
)
def test_moves_outside_the_table_are_refused(path, refused):
    life = EngineLifecycle()
    for state in path:
        life.move(state)
    before = life.state
    assert not life.can(refused)
    with pytest.raises(IllegalTransition):
        life.move(refused)
    assert life.state is before


def test_every_state_can_quit_but_closing_itself():
    for state, targets in TRANSITIONS.items():
        assert (EngineState.CLOSING in targets) == (state is not EngineState.CLOSING)
