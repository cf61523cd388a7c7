"""A run's child watching for the snippet taking away its voice: closing the descriptor the run
speaks on, or killing the worker's process (its parent, or its group). Either way the run
ends without a report; the witness leaves its last words for the client first
(`playground.engine.last_words`), with the phase and, for a kill, the snippet's line.

A kill is seen through Python's audit hook (`os.kill` and `os.killpg` are audited events), from
the snippet's own frame; a closed descriptor only when the next message cannot go out. Worker-side,
torch-free; installed in a run's child only (an audit hook cannot be removed).
"""

from __future__ import annotations

import os
import signal
import sys
from typing import Any

from playground.engine import last_words
from playground.engine.events import Progress
from playground.engine.scratch import ENV

#: Signals whose default action does not end a process: sending one harms nobody.
_HARMLESS = {0, signal.SIGCHLD, signal.SIGCONT, signal.SIGURG, signal.SIGWINCH}


class Witness:
    """One run's witness: `doing` follows the run's progress messages."""

    def __init__(self, run_id: Any, snippet_path: str, template_pid: int) -> None:
        self.run_id = run_id
        self.path = snippet_path
        self.template_pid = template_pid
        self.folder = os.environ.get(ENV)
        self.doing = last_words.LOADING
        self.spoke = False

    def install(self) -> None:
        sys.addaudithook(self._audit)

    def sent(self, message: dict[str, Any]) -> None:
        progress = Progress.from_dict(message)
        if progress is not None and progress.message:
            self.doing = progress.message

    def lost(self, fd: int, message: dict[str, Any]) -> None:
        """The channel is gone: sending `message` failed."""
        progress = Progress.from_dict(message)
        if progress is not None:
            failed = progress.message
        else:
            failed = f"sending the {message.get('event', 'report')}"
        self._say({"cause": "closed", "fd": fd, "doing": self.doing, "failed": failed})

    def _audit(self, event: str, args: tuple[Any, ...]) -> None:
        if event not in ("os.kill", "os.killpg") or self.spoke:
            return
        try:
            target, sig = int(args[0]), int(args[1])
        except (IndexError, TypeError, ValueError):
            return
        if sig in _HARMLESS:
            return
        whom = self._whom(event, target)
        if whom is None:
            return
        function, line = self._snippet_frame()
        if function is None:
            return  # not the snippet's own call (torch's, or ours)
        name = _signal_name(sig)
        self._say(
            {
                "cause": "killed",
                "whom": whom,
                "call": f"{event}({target}, {name})",
                "function": function,
                "line": line,
                "doing": self.doing,
            }
        )

    def _whom(self, event: str, target: int) -> str | None:
        group = os.getpgid(0)
        if event == "os.killpg":
            return "the worker's process group" if target == group else None
        if target == self.template_pid:
            return "the worker's process (its parent)"
        if target in (0, -group):
            return "the worker's process group"
        # Its own process is left out: that death is reported as it is (killed by SIGKILL,
        # with the out-of-memory hint, in the phase it was in), the worker unharmed.
        return None

    def _snippet_frame(self) -> tuple[str | None, int | None]:
        frame = sys._getframe(2)
        while frame is not None:
            if frame.f_code.co_filename == self.path:
                return frame.f_code.co_name, frame.f_lineno
            frame = frame.f_back
        return None, None

    def _say(self, words: dict[str, Any]) -> None:
        self.spoke = True
        last_words.write(self.folder, self.run_id, words)


def _signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return str(sig)
