"""A run that faults after its timeout's stack dump began timed out; before, it died.

faulthandler's watchdog dumps the run's stack half a second before the template kills it
(child.dump_after), reading the frames of a thread that is still running; now and then the
dump itself faults. Seen in CI: a `while True:` loop Dynamo traced until a 3 s timeout was
reported as "killed by SIGSEGV while Dynamo traced line 7" (DynamoCrashed), about one run in
twelve here, where every other run said Timeout. These tests reap real processes that die of
SIGSEGV through the template's own `_ended`.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from playground.worker.process import template
from playground.worker.process.child import dump_after

SEGFAULT = "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"


def _ended(dumping: bool, code: str = SEGFAULT) -> tuple[str, dict]:
    proc = subprocess.Popen([sys.executable, "-c", code])
    try:
        return template._ended(proc.pid, "", dumping)
    finally:
        proc.returncode = 0  # reaped by _ended: Popen must not wait for it again


def test_a_fault_after_the_dump_began_is_the_timeout():
    outcome, status = _ended(dumping=True)
    assert (outcome, status["signal"]) == ("timeout", "SIGSEGV")


def test_a_fault_before_the_dump_is_a_death():
    outcome, status = _ended(dumping=False)
    assert (outcome, status["signal"]) == ("died", "SIGSEGV")


def test_an_exit_after_the_dump_began_keeps_its_outcome():
    assert _ended(dumping=True, code="raise SystemExit(3)")[0] == "died"
    assert _ended(dumping=True, code="pass")[0] == "ok"


@pytest.mark.parametrize(("timeout", "at"), [(3.0, 2.5), (60.0, 59.5), (0.7, 0.5), (0.1, 0.5)])
def test_the_dump_comes_half_a_second_before_the_kill(timeout, at):
    assert dump_after(timeout) == pytest.approx(at)
