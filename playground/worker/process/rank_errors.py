"""Which rank's trouble a run across ranks is reported with (process/rank_group.py merges the
ranks' reports): the rank that failed on its own, with the ranks it left waiting or that were
stopped for it, or the collective in which the ranks fell out of step. Worker-side."""

from __future__ import annotations

import ast
from dataclasses import replace

from playground.engine.report import Report, RunError
from playground.worker.run import ranks


def plain(report: Report, path: str) -> Report:
    """A rank's report with gloo's words in its error made plain (ranks.plain_gloo), at the
    line of the collective it waited in."""
    error = report.error
    if error is None or ranks.collective_trouble(error.message) is None:
        return report
    # Left waiting by another rank: neither torch.compile's failure nor ours.
    plain = replace(
        error, kind="snippet", message=ranks.plain_gloo(error.message), line=collective_line(path, error.line)
    )
    return replace(report, error=plain)


#: torch.distributed's collectives and point-to-point calls, by the name a snippet calls them by.
COLLECTIVES = frozenset(
    {"all_reduce", "all_gather", "all_gather_into_tensor", "all_gather_object", "all_to_all", "all_to_all_single"}
    | {"broadcast", "broadcast_object_list", "reduce", "reduce_scatter", "reduce_scatter_tensor", "gather"}
    | {"scatter", "barrier", "send", "recv", "isend", "irecv", "monitored_barrier"}
)


def collective_line(path: str, line: int | None) -> int | None:
    """`line`, or the collective's line when `line` is the `def` of a function that makes one: a
    compiled function's frame stands at its `def` while its graph runs (measured on 2.13 with
    all_reduce under the eager backend), and the error belongs to the collective it waited in
    (the first, when it makes several)."""
    if line is None:
        return None
    try:
        with open(path, "rb") as fh:
            tree = ast.parse(fh.read(1 << 24))
    except (OSError, SyntaxError, ValueError):
        return line
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and line in (
            node.lineno,
            *(d.lineno for d in node.decorator_list),
        ):
            calls = sorted(
                call.lineno
                for call in ast.walk(node)
                if isinstance(call, ast.Call)
                and (
                    (isinstance(call.func, ast.Attribute) and call.func.attr in COLLECTIVES)
                    or (isinstance(call.func, ast.Name) and call.func.id in COLLECTIVES)
                )
            )
            return calls[0] if calls else line
    return line


def _left_waiting(error: RunError) -> bool:
    """Whether a rank's error is another rank's doing: its collective lost its peers, it was
    still running (waiting) when the run timed out, or it was stopped because another failed."""
    return ranks.collective_trouble(error.message) is not None or error.type in ("Timeout", "RankStopped")


def run_error(reports: list[Report], stack_lines: list[int | None]) -> RunError | None:
    """The run's error (the top level's, over rank 0's own), None to keep rank 0's: the rank
    that failed on its own (raised, or died) when there is one, and which ranks it left
    waiting; else the collective the ranks fell out of step in (collective_error). Rank 0's
    own failure stays as it is unless it left other ranks waiting."""
    causes = [r for r, report in enumerate(reports) if report.error is not None and not _left_waiting(report.error)]
    if not causes:
        return collective_error(reports, stack_lines)
    # Under torchrun, a rank whose report never came says least: a rank here that failed on its
    # own is named first, and the missing ones after it.
    missing = [r for r in causes if _missing(reports[r])]
    if len(missing) < len(causes):
        causes = [r for r in causes if r not in missing]
    else:
        missing = []
    waiting = [
        (r, report.error)
        for r, report in enumerate(reports)
        if report.error is not None and r not in causes and r not in missing
    ]
    rank, error = causes[0], reports[causes[0]].error
    assert error is not None
    if rank == 0 and not waiting and not missing:
        return None
    lines = [e.line or stack_lines[r] for r, e in waiting]
    # The failing rank's own line; where the others waited is said in words. A rank of torchrun's
    # job whose report never came has no line of its own: where the others waited for it is the one.
    line = error.line or stack_lines[rank]
    if line is None and error.type == "RankMissing":
        line = next((x for x in lines if x), None)
    said = error.message if error.message.startswith(f"rank {rank} ") else f"rank {rank}: {error.message}"
    if len(causes) > 1:
        said += f"; {_ranks(causes[1:])} failed too"
    if missing:
        said += f"; {_ranks(missing)} sent no report through torchrun's store"
    stopped = [r for r, e in waiting if e.type == "RankStopped"]
    if stopped:
        at = sorted({x for (r, _), x in zip(waiting, lines, strict=True) if x and r in stopped})
        where = f" at line {', '.join(map(str, at))}" if at else ""
        said += f"; {_ranks(stopped)} {_was(stopped)} stopped{where} because rank {rank} failed, as torchrun stops them"
    in_collective = [r for r, e in waiting if e.type not in ("Timeout", "RankStopped")]
    if in_collective:
        at = sorted({x for (r, _), x in zip(waiting, lines, strict=True) if x and r in in_collective})
        where = f" at line {', '.join(map(str, at))}" if at else ""
        said += f"; {_ranks(in_collective)} {_was(in_collective)} left waiting in a collective{where}"
    timed_out = [r for r, e in waiting if e.type == "Timeout"]
    if timed_out:
        said += f"; {_ranks(timed_out)} {_was(timed_out)} still running when the run timed out"
    if error.type == "RankDied" and "SIGABRT" in error.message and in_collective:
        # gloo's own check on a message's length ends the process (an uncaught C++ exception,
        # std::terminate) when ranks send the same collective different sizes.
        return RunError(
            kind="snippet",
            type="CollectiveMismatch",
            message=(
                f"the ranks fell out of step: {said}. gloo aborts a rank whose peer sends a "
                "collective of another size: check that every rank passes the same shape"
            ),
            line=line or next((x for x in lines if x), None),
            detail=error.detail,
        )
    return replace(error, message=said, line=line)


def _missing(report: Report) -> bool:
    return report.error is not None and report.error.type == "RankMissing"


def _was(ranks_: list[int]) -> str:
    return "was" if len(ranks_) == 1 else "were"


def collective_error(reports: list[Report], stack_lines: list[int | None]) -> RunError | None:
    """The run's error when ranks fell out of step in a collective: which ranks waited, on
    which line of the snippet, and that the others never got there; None when no rank did.
    A rank whose wait names no snippet line was left waiting elsewhere (in a later collective,
    or in the run's own agreements) by a rank that went another way."""
    waited: list[tuple[int, int | None]] = []  # its wait in a collective timed out
    stuck: list[tuple[int, int | None]] = []  # killed at the run's timeout, where its stack was
    for rank, report in enumerate(reports):
        error = report.error
        if error is None:
            continue
        if ranks.collective_trouble(error.message) is not None:
            waited.append((rank, error.line))
        elif error.type == "Timeout":
            stuck.append((rank, error.line or stack_lines[rank]))
    if not waited and not stuck:
        return None
    if stuck:
        said = "; ".join(f"rank {r} was still running{_at(line)} when the run timed out" for r, line in stuck)
        if waited:
            said += f"; {_ranks([r for r, _ in waited])} waited for it in a collective until its wait timed out"
        first = next((line for _, line in stuck if line), None)
    elif any(line for _, line in waited):
        who = sorted({r for r, line in waited if line})
        others = [r for r in range(len(reports)) if r not in who]
        lines = sorted({line for _, line in waited if line})
        said = (
            f"{_ranks(who)} made a collective at line {', '.join(map(str, lines))} that "
            f"{_ranks(others) if others else 'the other ranks'} never reached"
        )
        first = lines[0]
    else:
        said = f"{_ranks([r for r, _ in waited])} waited in a collective that the other ranks never reached"
        first = None
    return RunError(
        kind="snippet",
        type="CollectiveMismatch",
        message=f"the ranks fell out of step: {said}",
        line=first,
        detail="\n".join(r.error.detail for r in reports if r.error is not None and r.error.detail)[-6000:],
    )


def _at(line: int | None) -> str:
    return f" at line {line}" if line else ""


def _ranks(ranks_: list[int]) -> str:
    if len(ranks_) == 1:
        return f"rank {ranks_[0]}"
    return "ranks " + ", ".join(map(str, ranks_[:-1])) + f" and {ranks_[-1]}"
