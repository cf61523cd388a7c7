"""A run across ranks: one fact that differs between them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from playground.engine.report.wire import Wire, wire


@dataclass(frozen=True)
class Divergence(Wire):
    """One fact of the report that is not the same on every rank: `what` is its report key
    (`graph_count`, `recompiles`, `graph_breaks`, `guards`, `equivalence`, `error`, `timings`),
    `ranks` its value on each rank (keyed by the rank as a string, as JSON keys are), `message`
    the difference in words ("only rank 1 recompiled: size of x[0] 4 → 3")."""

    what: str = ""
    ranks: Mapping[str, Any] = wire(factory=lambda: MappingProxyType({}))
    message: str = ""


@dataclass(frozen=True)
class DdpBuckets(Wire):
    """What DDP's optimizer (`dynamo.optimize_ddp`) did to a DDP-wrapped target's graphs: DDP's
    bucket size, and for each compiled frame whose graph it cut at the bucket boundaries, the
    number of graphs the backend was handed under that one compile id (`{"4/0": 4}`). Graphs,
    not graph breaks: nothing ran eagerly between them. `splits` empty: it cut none."""

    bucket_mb: float = 0.0
    splits: Mapping[str, int] = wire(factory=lambda: MappingProxyType({}))
