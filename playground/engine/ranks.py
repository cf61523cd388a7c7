"""A run across ranks, torch-free: the one report made of each rank's, and what differs.

The worker runs the snippet in N processes joined by torch.distributed (--ranks N) and hands
each rank's report here. The run's report is rank 0's at the top level (the contract's rule),
with `world_size`, every rank's report under `ranks`, and `divergence`: one entry per fact that
is not the same on every rank, in words a user reads at a glance ("only rank 1 recompiled, at
call 4: size of x[0] 4 → 3"). A fact compared here is a fact the report already holds; nothing
is read from torch's text.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from playground.engine.report import Divergence, Report

#: A rank's timing differs from another's when one's compiled/eager ratio is this many times the
#: other's: both run on the same cores at once, so smaller differences are the machine's noise.
TIMING_FACTOR = 1.5


@dataclass(frozen=True)
class Launch:
    """This process's place in a job torchrun launched (its environment, read once): the
    playground then runs as that one rank of the job, its run joining the job's other ranks
    through torchrun's own store (on this machine or another), instead of forking its ranks."""

    rank: int
    world_size: int
    local_rank: int
    #: torchrun's store (the rendezvous's, shared by the agents: TORCHELASTIC_USE_AGENT_STORE).
    master_addr: str
    master_port: int
    #: torchrun's --rdzv-id (or its default), and how many times the job has restarted: our keys
    #: in the store live under both, so no restart reads an earlier one's.
    run_id: str
    restart: int = 0
    agent_store: bool = True

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Launch:
        return cls(
            rank=int(data["rank"]),
            world_size=int(data["world_size"]),
            local_rank=int(data["local_rank"]),
            master_addr=str(data["master_addr"]),
            master_port=int(data["master_port"]),
            run_id=str(data["run_id"]),
            restart=int(data.get("restart", 0)),
            agent_store=bool(data.get("agent_store", True)),
        )


def launch_of(environ: Mapping[str, str]) -> Launch | None:
    """The job torchrun launched this process in, from its environment; None when it was not
    (no TORCHELASTIC_RUN_ID, which torchrun always sets), or when the job is one process. An
    environment with only some of torchrun's variables is not a launch: the playground then
    runs on its own (and a snippet that asks for the default group is told so)."""

    def number(key: str) -> int | None:
        value = environ.get(key, "")
        return int(value) if value.isdigit() else None

    world, rank, port = number("WORLD_SIZE"), number("RANK"), number("MASTER_PORT")
    addr, run_id = environ.get("MASTER_ADDR", ""), environ.get("TORCHELASTIC_RUN_ID", "")
    if not run_id or not addr or world is None or rank is None or port is None:
        return None
    if world < 2 or rank >= world or not 0 < port < 65536:
        return None
    return Launch(
        rank=rank,
        world_size=world,
        local_rank=number("LOCAL_RANK") or 0,
        master_addr=addr,
        master_port=port,
        run_id=run_id,
        restart=number("TORCHELASTIC_RESTART_COUNT") or 0,
        agent_store=environ.get("TORCHELASTIC_USE_AGENT_STORE", "True") == "True",
    )


def merged(reports: Sequence[Report]) -> Report:
    """The run's report: rank 0's at the top, every rank's under `ranks`, the divergence."""
    if not reports:
        raise ValueError("a run across ranks has at least one rank's report")
    ranks = tuple(replace(r, ranks=(), divergence=(), world_size=None) for r in reports)
    return replace(ranks[0], world_size=len(ranks), ranks=ranks, divergence=divergence(ranks))


def divergence(reports: Sequence[Report]) -> tuple[Divergence, ...]:
    """Each fact that differs between the ranks' reports, in the order a user looks for them."""
    found: list[Divergence] = []
    for fact in _FACTS:
        entry = fact(reports)
        if entry is not None:
            found.append(entry)
    return tuple(found)


def _values(reports: Sequence[Report], value: Callable[[Report], Any]) -> dict[str, Any]:
    return {str(rank): value(report) for rank, report in enumerate(reports)}


def _same(values: dict[str, Any]) -> bool:
    return len({repr(v) for v in values.values()}) <= 1


def _ranks_word(ranks: Sequence[str]) -> str:
    if len(ranks) == 1:
        return f"rank {ranks[0]}"
    return "ranks " + ", ".join(ranks[:-1]) + " and " + ranks[-1]


def _each(values: dict[str, Any], word: Callable[[Any], str] = str) -> str:
    """ "rank 0: 1, rank 1: 2", grouping ranks that agree ("ranks 0, 2: 1, rank 1: 2")."""
    groups: dict[str, list[str]] = {}
    for rank, value in values.items():
        groups.setdefault(word(value), []).append(rank)
    return ", ".join(f"{_ranks_word(ranks)}: {said}" for said, ranks in groups.items())


def _graphs(reports: Sequence[Report]) -> Divergence | None:
    values = _values(reports, lambda r: r.graph_count)
    if _same(values):
        return None
    return Divergence("graph_count", values, f"graphs differ between ranks: {_each(values)}")


def _recompiles(reports: Sequence[Report]) -> Divergence | None:
    values = _values(reports, lambda r: r.recompile_count)
    if _same(values):
        return None
    recompiled = [rank for rank, count in values.items() if count]
    if 0 < len(recompiled) < len(values):
        first = reports[int(recompiled[0])]
        why = _first_reason(first)
        only = "only " + _ranks_word(recompiled) + " recompiled"
        return Divergence("recompiles", values, f"{only}{why} ({_each(values)})")
    return Divergence("recompiles", values, f"recompiles differ between ranks: {_each(values)}")


def _first_reason(report: Report) -> str:
    """ ", at call 4: size of x[0] 4 → 3": the first recompile's first reason, as the
    explanation reads it (was → now per argument), or torch's reason line."""
    for detail in report.explanation.recompiles:
        at = f", at call {detail.call}" if detail.call is not None else ""
        for row in detail.reasons:
            if row.was or row.now:
                return f"{at}: {row.guard or row.arg} {row.was} → {row.now}"
            if row.guard:
                return f"{at}: {row.guard}"
    for recompile in report.recompiles:
        if recompile.reasons:
            return f": {recompile.reasons[0]}"
    return ""


def _breaks(reports: Sequence[Report]) -> Divergence | None:
    values = _values(reports, lambda r: sorted({(b.line or 0, b.reason) for b in r.graph_breaks}))
    if _same(values):
        return None
    counts = _values(reports, lambda r: r.graph_break_count)
    lines = _values(reports, lambda r: sorted({b.line for b in r.graph_breaks if b.line}))
    where = _each(lines, lambda ls: f"line{'s' if len(ls) > 1 else ''} " + ", ".join(map(str, ls)) if ls else "none")
    return Divergence("graph_breaks", counts, f"graph breaks differ between ranks: {_each(counts)} ({where})")


def _guards(reports: Sequence[Report]) -> Divergence | None:
    sets = [{g.compared for e in r.explanation.guards for g in e.guards if not g.internal} for r in reports]
    if len({frozenset(s) for s in sets}) <= 1:
        return None
    values = _values(reports, lambda r: sum(len(s.guards) for s in r.guards))
    entries = _values(reports, lambda r: len(r.guards))
    common = set.intersection(*sets)
    example = next(((rank, sorted(s - common)[0]) for rank, s in enumerate(sets) if s - common), None)
    shown = (
        f"; only rank {example[0]} has a {example[1][0] or 'guard'} guard: {_short(example[1][2])}" if example else ""
    )
    held = _each(
        {k: (entries[k], values[k]) for k in values},
        lambda v: f"{v[0]} {'entry' if v[0] == 1 else 'entries'}, {v[1]} guards",
    )
    return Divergence("guards", values, f"guards differ between ranks: {held}{shown}")


def _short(text: str, width: int = 48) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _equivalence(reports: Sequence[Report]) -> Divergence | None:
    values = _values(reports, lambda r: r.equivalence_word)
    if _same(values):
        return None
    return Divergence("equivalence", values, f"equivalence differs between ranks: {_each(values)}")


def _errors(reports: Sequence[Report]) -> Divergence | None:
    values = _values(reports, lambda r: r.error.one_line() if r.error is not None else None)
    if _same(values):
        return None
    return Divergence("error", values, f"errors differ between ranks: {_each(values, lambda v: v or 'none')}")


def _timings(reports: Sequence[Report]) -> Divergence | None:
    def ratio(report: Report) -> float | None:
        t = report.timings
        if t is None or t.unreliable or t.speedup is None or t.speedup <= 0:
            return None
        return round(t.speedup, 2)

    values = _values(reports, ratio)
    known = [v for v in values.values() if v is not None]
    if len(known) < 2 or max(known) < TIMING_FACTOR * min(known):
        return None
    said = _each(values, lambda v: f"{v:.2f}x" if v is not None else "n/a")
    return Divergence("timings", values, f"speedups differ between ranks beyond noise: {said}")


_FACTS: tuple[Callable[[Sequence[Report]], Divergence | None], ...] = (
    _errors,
    _graphs,
    _breaks,
    _recompiles,
    _guards,
    _equivalence,
    _timings,
)


def shown(report: Report, rank: int | None) -> Report:
    """`report` as the app's panes show one rank: that rank's own facts at the top level, the
    world size, every rank's report and the divergence kept. The report itself when it is not
    a run across ranks or `rank` names none of its ranks (rank 0 is the top level already)."""
    if rank is None or report.world_size is None or not 0 <= rank < len(report.ranks):
        return report
    chosen = report.ranks[rank]
    return replace(chosen, world_size=report.world_size, ranks=report.ranks, divergence=report.divergence)
