"""A run's last words: what its child leaves in the worker's scratch folder when the snippet took
away its voice, and the error the client makes of them. Torch-free.

The run's child speaks on one descriptor. A snippet that closes descriptors (`os.closerange(3,
1024)`, as daemon-style code does) closes that one too, and a snippet that kills the worker's
process (its parent, or its whole group) ends the run before it can report. Both had read as
the tool's fault, "worker error: WorkerDied … while loading the snippet", in the wrong phase and
with no line. The child now writes a small file first, by path (a new descriptor, which no
earlier close can have taken), and the client reads it when the run ends without a report.
"""

from __future__ import annotations

import contextlib
import json
import os
from typing import Any

from playground.engine.report import RunError

#: The phase the client names before a run has said anything else (RunFailures.phase).
LOADING = "loading the snippet"


def path(folder: str, run_id: Any) -> str:
    return os.path.join(folder, f"last-words-{int(run_id)}.json")


def write(folder: str | None, run_id: Any, words: dict[str, Any]) -> None:
    """Leave `words` for the client; the first words of a run stand (a later failure is only
    a consequence of the first)."""
    if not folder or not isinstance(run_id, int):
        return
    with contextlib.suppress(OSError, ValueError):
        fd = os.open(path(folder, run_id), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            json.dump(words, fh)


def read(folder: str | None, run_id: Any) -> dict[str, Any] | None:
    """The run's last words, if it left any (the file is removed)."""
    if not folder or not isinstance(run_id, int):
        return None
    name = path(folder, run_id)
    try:
        with open(name) as fh:
            words = json.load(fh)
    except (OSError, ValueError):
        return None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(name)
    return words if isinstance(words, dict) else None


def error(words: dict[str, Any]) -> RunError | None:
    """The snippet's error the words tell of; None for words this client cannot read."""
    line = words.get("line") if isinstance(words.get("line"), int) else None
    where = _where(words)
    if words.get("cause") == "killed":
        whom = str(words.get("whom", "the worker's process"))
        call = str(words.get("call", "a signal"))
        return RunError(
            kind="snippet",
            type="KilledWorker",
            message=f"the snippet killed {whom} with {call} {where}: the run ended before it could report",
            line=line,
        )
    if words.get("cause") == "closed":
        fd = words.get("fd")
        return RunError(
            kind="snippet",
            type="ClosedDescriptor",
            message=(
                f"the snippet closed the descriptor the run reports on (fd {fd}) {where}, so the run "
                "could not report (os.closerange or os.close on inherited descriptors?)"
            ),
            line=line,
        )
    return None


def _where(words: dict[str, Any]) -> str:
    function, line = words.get("function"), words.get("line")
    doing, failed = str(words.get("doing") or LOADING), words.get("failed")
    if function:
        place = "in the snippet's module code" if function == "<module>" else f"in {function}()"
        place += f" at line {line}" if isinstance(line, int) else ""
        return place if doing == LOADING else f"{place}, while {doing}"
    if failed in ("eager call 1", "compiling call 1") and doing == LOADING:
        return "in its module code or in inputs(), before call 1"
    if failed:
        return f"after “{doing}” and before “{failed}”"
    return f"while {doing}"
