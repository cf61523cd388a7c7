"""The findings lane, its torch-free rules: when a run gets one, and what the complete report
says of the findings shown before it.

Under a slow backend (Inductor: seconds to tens of seconds per graph on a real model) a save's
graphs, breaks, guards and recompiles wait for the backend, though Dynamo decided them in a
fraction of that time. The template then forks one more process beside the run's child
(playground/worker/process/reference_forks.py) that makes the same calls with backend "eager"
and only the capture, and sends Dynamo's findings as a `FindingsEvent` (events.py). The
complete report supersedes them; `changed` names what the backend made differ.

No lane where it would not be first: an eager or aot_eager backend (the run itself is as quick),
and a save whose code and settings this worker has compiled before (a comment-only save: the
backend's caches hit and the complete report comes about as soon as the lane's would,
benchmarks/findings_latency.py measures both). A program and a run across ranks get none yet:
a program compiles whatever its own torch.compile calls ask for, and every rank would need its
own lane.
"""

from __future__ import annotations

import ast
import hashlib
import json
from collections import OrderedDict
from typing import Any

from playground.engine.report import Report
from playground.engine.run_request import RunRequest

#: The backend the lane traces with: Dynamo's own decisions, no backend compile.
LANE_BACKEND = "eager"
#: Backends whose run is about as quick as the lane: no lane for them.
QUICK_BACKENDS = frozenset({"eager", "aot_eager"})
#: The sections the lane reports, by the report's field names.
SECTIONS = (
    "graph_count",
    "graph_break_count",
    "graph_breaks",
    "recompile_count",
    "recompiles",
    "recompile_limit_hit",
    "guards",
)


class CompiledBefore:
    """The code and settings this worker has compiled (most recent `size`): a save that only
    changes comments or spacing compiles the same graphs, which the backend's caches hold."""

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self._seen: OrderedDict[str, None] = OrderedDict()

    def seen(self, run: RunRequest) -> bool:
        key = code_key(run)
        return key is not None and key in self._seen

    def add(self, run: RunRequest) -> None:
        key = code_key(run)
        if key is None:
            return
        self._seen[key] = None
        self._seen.move_to_end(key)
        while len(self._seen) > self.size:
            self._seen.popitem(last=False)


def code_key(run: RunRequest) -> str | None:
    """The run's code as Python reads it (its syntax tree, without comments, spacing or line
    numbers), its path and settings; None when the text does not parse."""
    try:
        tree = ast.dump(ast.parse(run.text), include_attributes=False)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    settings = json.dumps(run.settings.to_dict(), sort_keys=True, default=str)
    return hashlib.sha256("\0".join((run.path, settings, tree)).encode("utf-8", "replace")).hexdigest()


def lane_wanted(run: RunRequest, before: CompiledBefore) -> bool:
    """Whether this run gets a findings lane: asked for, a snippet in one process under a slow
    backend, and code this worker has not compiled under these settings."""
    return (
        run.flags.early_findings
        and run.program is None
        and run.settings.ranks <= 1
        and not run.passes.fixes
        and run.settings.backend not in QUICK_BACKENDS
        and not before.seen(run)
    )


def _section(report: Report, name: str) -> Any:
    value = getattr(report, name)
    if name == "guards":
        # The worker's parse of each guard, compared as ranks compare them (GuardDetail.compared):
        # the same identity guard holds two addresses in the lane's process and the run's.
        # Torch's own guards too: a backend's shape guard is one.
        return [
            (entry.compile_id, entry.function, [g.compared for g in entry.guards])
            for entry in report.explanation.guards
        ]
    if isinstance(value, tuple):
        return [item.to_dict() if hasattr(item, "to_dict") else item for item in value]
    return value


def changed(findings: Report, complete: Report) -> tuple[str, ...]:
    """The sections (field names) in which the complete report differs from the findings."""
    return tuple(name for name in SECTIONS if _section(findings, name) != _section(complete, name))


_WORDS = {
    "graph_count": "graphs",
    "graph_break_count": "breaks",
    "graph_breaks": "break sites",
    "recompile_count": "recompiles",
    "recompiles": "recompile reasons",
    "recompile_limit_hit": "the recompile limit",
    "guards": "guards",
}


def superseded(findings: Report, complete: Report) -> str:
    """What the complete report says of the findings shown before it: "" when they agree;
    else which sections the backend changed, or that it failed and the report supersedes."""
    backend = complete.settings.backend
    if complete.error is not None and findings.error is None:
        return (
            f"{backend} failed where Dynamo's own trace (backend {LANE_BACKEND}) did not: "
            "this complete report supersedes the findings shown first"
        )
    names = changed(findings, complete)
    if not names:
        return ""
    counts = [f"{_WORDS[n]} {getattr(findings, n)} -> {getattr(complete, n)}" for n in names if n.endswith("_count")]
    others = [_WORDS[n] for n in names if not n.endswith("_count")]
    return (
        f"the findings shown first (Dynamo with backend {LANE_BACKEND}) differ under {backend}: "
        + ", ".join(counts + others)
        + "; this complete report supersedes them"
    )


def still_compiling(backend: str) -> str:
    """The status while the findings are shown and the backend still compiles (the summary bar
    ends it with an ellipsis: "findings shown; inductor compiling…")."""
    return f"findings shown; {backend} compiling"
