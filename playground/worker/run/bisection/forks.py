"""The bisection's fresh processes: each step's verdict, the culprit's line and the first
diverging op are worked out in a process forked from the bisection's driver (which has imported
torch and done Inductor's start-up but never run an op), read back on a pipe within the step's timeout; and `StepStopped`,
what ends the bisection with an error instead of a verdict."""

from __future__ import annotations

import json
import os
import select
import signal
import time
from typing import Any

from playground.worker.run.bisection.culprit import op_line
from playground.worker.run.bisection.verdict import SnippetFailed, one_line, verdict

#: The longest one process of the bisection may take (load, eager, compile, compare): a compile
#: that never ends would otherwise hold the bisection forever. `--timeout S` sets it.
STEP_TIMEOUT_S = 600.0


class StepTimedOut(Exception):
    """A step's process did not answer in time; `eager_done` says whether its eager side had
    finished (then it was the compile that hung)."""

    def __init__(self, eager_done: bool) -> None:
        super().__init__("timed out")
        self.eager_done = eager_done


#: Written by a step's process once its eager side has finished, before its answer.
EAGER_DONE = b"e"


def in_fresh_fork(work: Any, children: list[int], timeout_s: float = STEP_TIMEOUT_S) -> tuple[bytes, int]:
    """`work(say)`'s bytes, computed in a process forked from here (stdout to /dev/null, default
    signal handlers) and read back on a pipe (`say` writes to it early); the child is on
    `children` while it runs, so a signal kills it. Past `timeout_s` the child is killed and
    StepTimedOut raised. With the bytes, the child's wait status (a signal that killed it)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        answer = b""
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
            answer = work(lambda data: os.write(write, data))
        finally:
            os.write(write, answer)
            os._exit(0)
    os.close(write)
    children.append(pid)
    deadline = time.monotonic() + timeout_s
    try:
        data = b""
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([read], [], [], left)[0]:
                if time.monotonic() < deadline:
                    continue
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                raise StepTimedOut(data.startswith(EAGER_DONE))
            chunk = os.read(read, 4096)
            if not chunk:
                break
            data += chunk
        status = os.waitpid(pid, 0)[1]
    finally:
        children.remove(pid)
        os.close(read)
    return data, status


class StepStopped(Exception):
    """What ends the bisection with an error instead of a verdict, `phase` and its one-line
    `message` as the channel sends them: a step's process timed out, the snippet failed on its
    own, the bisector's state files went while it ran (each later step would run plain Inductor,
    fail, and the bisector would name the backend it stood at), or the settings were refused."""

    def __init__(self, phase: str, message: str) -> None:
        super().__init__(message)
        self.phase, self.message = phase, message


def fresh_verdict(
    snippet: str,
    config: dict[str, Any],
    children: list[int],
    timeout_s: float = STEP_TIMEOUT_S,
    backend: str = "inductor",
) -> bool | tuple[str, str]:
    """The verdict in a fresh process: True or False (agree or not), or (phase, one-line cause)
    when it could not be judged: the snippet itself failed, or its process died during its eager
    run ("snippet"); the compiled run raised or its process died during it ("compile"; for a step
    of the bisection that is a failing step, as in torch's own). Raises StepTimedOut past
    `timeout_s`."""

    def work(say: Any) -> bytes:
        try:
            agree = verdict(snippet, config, on_eager=lambda: say(EAGER_DONE), backend=backend)
            return b"1" if agree else b"0"
        except SnippetFailed as exc:
            return b"S" + str(exc).encode("utf-8", "replace")[:2000]
        except BaseException as exc:  # noqa: BLE001 - the compiled side raised
            return b"C" + one_line(exc, snippet).encode("utf-8", "replace")[:2000]

    data, status = in_fresh_fork(work, children, timeout_s)
    eager_done = data.startswith(EAGER_DONE)
    data = data.removeprefix(EAGER_DONE)
    if data[:1] in (b"S", b"C"):
        return ("snippet" if data[:1] == b"S" else "compile", data[1:].decode("utf-8", "replace"))
    if data not in (b"0", b"1"):
        how = (
            f"was killed by {_signal_name(os.WTERMSIG(status))}"
            if os.WIFSIGNALED(status)
            else f"exited with status {os.waitstatus_to_exitcode(status)}"
        )
        # Before its eager side had finished, it was the snippet's own run (os._exit, a signal).
        phase = "compile" if eager_done else "snippet"
        side = "the compiled run" if eager_done else "the snippet's eager run"
        return (phase, f"its process {how} during {side}, without an answer")
    return data == b"1"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def fresh_line(snippet: str, config: dict[str, Any], op: str, children: list[int]) -> int | None:
    """`culprit.op_line` in a fresh process; None when it found none (or failed, or timed out)."""

    def work(_say: Any) -> bytes:
        try:
            line = op_line(snippet, config, op)
        except BaseException:  # noqa: BLE001 - no line is an answer, not a failure
            return b""
        return str(line).encode() if line is not None else b""

    try:
        data, _ = in_fresh_fork(work, children)
    except StepTimedOut:
        return None
    return int(data) if data.isdigit() else None


def fresh_diverging(snippet: str, config: dict[str, Any], children: list[int]) -> dict[str, Any] | None:
    """diverging.py's first diverging op, in a fresh process; None when it could not be found
    (its own failure is not the bisection's)."""

    def work(_say: Any) -> bytes:
        from playground.worker.run.bisection.diverging import first_diverging_op

        try:
            return json.dumps(first_diverging_op(snippet, config), allow_nan=False).encode()
        except BaseException:  # noqa: BLE001 - no answer is an answer, not a failure
            return b""

    try:
        data, _ = in_fresh_fork(work, children)
        found = json.loads(data) if data else None
    except (StepTimedOut, ValueError):
        return None
    return found if isinstance(found, dict) else None
