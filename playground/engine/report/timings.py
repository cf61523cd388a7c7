"""The timings of eager against compiled, and the machine while they ran."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from playground.engine.report.save_waterfall import SaveWaterfall
from playground.engine.report.wire import Wire, absent_if_empty, absent_if_none, wire


@dataclass(frozen=True)
class Timings(Wire):
    note: str = ""
    compile_s: float | None = None
    device: str = "cpu"
    #: "hit", "miss", "partial", "disabled" or "n/a" (backends without Inductor's caches).
    compile_cache: str = "n/a"
    #: Inductor's FX graph and AOT autograd cache hits and misses during the first call.
    cache_counts: Mapping[str, int] = wire(factory=lambda: MappingProxyType({}))
    timed_call: int | None = None
    eager_ms: float | None = None
    compiled_ms: float | None = None
    eager_iqr_ms: float | None = None
    compiled_iqr_ms: float | None = None
    eager_runs: int = 0
    compiled_runs: int = 0
    speedup: float | None = None
    #: Why the speedup is not to be believed ("" when it is): too few runs, a wide spread, a
    #: busy machine, or an impossible result (the eager backend far from 1x).
    unreliable: str = wire("", omit=absent_if_empty("unreliable"))
    #: The speedup's spread: the quartiles of the ratio over the interleaved blocks.
    speedup_low: float | None = wire(None, omit=absent_if_none("speedup_low"))
    speedup_high: float | None = wire(None, omit=absent_if_none("speedup_high"))
    blocks: int = wire(0, omit=absent_if_empty("blocks"))
    machine: Machine | None = wire(None, omit=absent_if_none("machine"))
    #: Graphs compiled during the timing loop (not in graph_count): the steady state was never reached.
    graphs_during_timing: int = wire(0, omit=absent_if_empty("graphs_during_timing"))
    #: The threads torch's CPU ops used while timing (torch.get_num_threads()): a speedup on 2
    #: threads says little about 32.
    threads: int | None = wire(None, omit=absent_if_none("threads"))
    #: The save's waterfall: the run's phases from the client's request to the report
    #: (save_waterfall.py). None (key absent) in reports that predate it.
    save: SaveWaterfall | None = wire(None, omit=absent_if_none("save"))
    #: A program's callable: torch.utils.benchmark's figure for its last steady call's
    #: arguments, beside the speedup of the program's own calls (absent elsewhere).
    benchmark: TorchBenchmark | None = wire(None, omit=absent_if_none("benchmark"))


@dataclass(frozen=True)
class TorchBenchmark(Wire):
    """torch.utils.benchmark's medians for the same arguments compiled and eagerly, or (note) why
    there are none."""

    eager_ms: float | None = None
    compiled_ms: float | None = None
    speedup: float | None = None
    #: The Timer's measurements, both sides together.
    runs: int = 0
    note: str = wire("", omit=absent_if_empty("note"))


@dataclass(frozen=True)
class Machine(Wire):
    """The machine while the timings ran: how much of our CPUs others took."""

    cpus: int = 0
    #: The 1-minute load average at the end, and the runnable threads then.
    load1: float | None = None
    runnable: int | None = None
    #: CPUs' worth of time that other processes (and the hypervisor) used on our CPUs meanwhile.
    others_cpu: float | None = None
