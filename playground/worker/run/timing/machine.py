"""How busy the machine was while we timed: CPU time that other processes (and the hypervisor)
took on the CPUs this process may run on, read from /proc/stat around the timing loop.
Worker-side, torch-free; where /proc is missing, nothing is known and nothing is claimed.

On a shared 2-core machine, single eager calls of the same model were seen to alternate between
14 ms and 530 ms (OpenMP threads waiting on a descheduled sibling): a ratio taken then is noise,
and the report says so instead of printing it (timing.py).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from playground.engine.report import Machine

#: /proc/stat's per-CPU columns counted as busy: user nice system (idle iowait) irq softirq steal.
_BUSY = (0, 1, 2, 5, 6, 7)


def _cpus() -> set[int]:
    try:
        return set(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return set(range(os.cpu_count() or 1))


def _busy_ticks(cpus: set[int]) -> int | None:
    try:
        with open("/proc/stat") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    total = 0
    for line in lines:
        name, _, rest = line.partition(" ")
        if not name.startswith("cpu") or name == "cpu" or not name[3:].isdigit() or int(name[3:]) not in cpus:
            continue
        values = [int(v) for v in rest.split()]
        total += sum(values[i] for i in _BUSY if i < len(values))
    return total


def _own_ticks() -> int | None:
    """This process's CPU time (all its threads) in clock ticks."""
    try:
        with open("/proc/self/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime, stime
    except (OSError, IndexError, ValueError):
        return None


def _loadavg() -> tuple[float | None, int | None]:
    try:
        with open("/proc/loadavg") as fh:
            parts = fh.read().split()
        return float(parts[0]), int(parts[3].split("/")[0])
    except (OSError, IndexError, ValueError):
        return None, None


@dataclass
class Watch:
    """Started before the timing loop; `stop()` gives the Machine as it was meanwhile."""

    cpus: set[int]
    busy: int | None
    own: int | None
    started: float

    @classmethod
    def start(cls) -> Watch:
        cpus = _cpus()
        return cls(cpus, _busy_ticks(cpus), _own_ticks(), time.monotonic())

    def stop(self) -> Machine:
        busy, own = _busy_ticks(self.cpus), _own_ticks()
        elapsed = time.monotonic() - self.started
        load1, runnable = _loadavg()
        others = None
        if None not in (busy, own, self.busy, self.own) and elapsed > 0:
            hz = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
            ticks = (busy - self.busy) - (own - self.own)  # type: ignore[operator]
            others = round(max(ticks, 0) / hz / elapsed, 2)
        return Machine(cpus=len(self.cpus), load1=load1, runnable=runnable, others_cpu=others)
