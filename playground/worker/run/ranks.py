"""A rank's side of a run across ranks: torchrun's environment and the process group, made
before the snippet loads, and the few agreements the run's own loops need. Worker-side.

Every process of a run across ranks is a fork of the template (process/rank_group.py forks
them): the compiled run of each rank joins one process group, the eager references of all ranks
another (on a port of its own), so that the snippet's collectives pair each rank's compiled
call with the other ranks' compiled calls, and its references with theirs. A program makes its
own group, as it does under torchrun: it is given the environment only.

Our own agreements (how many calls a timing block makes, when the timing loop ends) go
through a group of their own, apart from the snippet's collectives: the loop is measured by
each rank's clock, and a rank that stopped a block sooner than another would otherwise leave
the other waiting in the snippet's next all_reduce.
"""

from __future__ import annotations

import contextlib
import datetime
import os
import re
from collections import Counter
from collections.abc import Sequence
from types import MappingProxyType
from typing import Any

from playground.engine.report.graphs import Graph
from playground.engine.report.ranks import DdpBuckets
from playground.worker.run.request import RankPlace

#: Our own group, while this process is a rank of a run (None otherwise).
_agreements: Any = None


def environment(place: RankPlace, port: int) -> dict[str, str]:
    """The variables torchrun sets for one worker on one node."""
    return {
        "RANK": str(place.rank),
        "LOCAL_RANK": str(place.rank),
        "GROUP_RANK": "0",
        "ROLE_RANK": str(place.rank),
        "WORLD_SIZE": str(place.world_size),
        "LOCAL_WORLD_SIZE": str(place.world_size),
        "ROLE_WORLD_SIZE": str(place.world_size),
        "MASTER_ADDR": "127.0.0.1",
        "MASTER_PORT": str(port),
        "TORCHELASTIC_RUN_ID": "compile-playground",
    }


def join(place: RankPlace, *, port: int, device: str, make_group: bool) -> None:
    """Become rank `place.rank`: torchrun's environment, and (unless the code makes its own,
    `make_group` False) the process group over the loopback `port`: gloo on CPU, nccl on CUDA."""
    global _agreements
    import torch

    os.environ.update(environment(place, port))
    if "OMP_NUM_THREADS" not in os.environ:
        # torchrun's own default with more than one process per node: one thread each.
        os.environ["OMP_NUM_THREADS"] = "1"
        torch.set_num_threads(1)
    if not make_group:
        return
    import torch.distributed as dist

    timeout = datetime.timedelta(seconds=place.collective_timeout_s)
    backend = "gloo"
    if device.startswith("cuda") and torch.cuda.is_available():
        backend = "nccl"
        torch.cuda.set_device(place.rank % torch.cuda.device_count())
    dist.init_process_group(backend, rank=place.rank, world_size=place.world_size, timeout=timeout)
    _agreements = _Later(timeout)


class _Later:
    """Our own group, made at its first use: every rank reaches the timing loop's first
    agreement at the same point of the run, so the group's making (itself collective) pairs; a
    run without timing never pays for it."""

    def __init__(self, timeout: datetime.timedelta) -> None:
        self.timeout = timeout
        self._group: Any = None

    def group(self) -> Any:
        if self._group is None:
            import torch.distributed as dist

            self._group = dist.new_group(backend="gloo", timeout=self.timeout)
        return self._group


def leave() -> None:
    """The process group gone, as the snippet's own script would end it."""
    global _agreements
    _agreements = None
    import torch.distributed as dist

    with contextlib.suppress(Exception):
        if dist.is_initialized():
            dist.destroy_process_group()


def agreed_max(value: int) -> int:
    """The largest `value` any rank has (this rank's own outside a run across ranks)."""
    if _agreements is None:
        return value
    import torch
    import torch.distributed as dist

    tensor = torch.tensor([int(value)], dtype=torch.int64)
    dist.all_reduce(tensor, op=dist.ReduceOp.MAX, group=_agreements.group())
    return int(tensor.item())


def agreed_any(flag: bool) -> bool:
    """Whether `flag` holds on any rank (this rank's own outside a run across ranks)."""
    return bool(agreed_max(1 if flag else 0))


#: gloo's words when a collective's peers are not where it is (torch 2.13, 2.14): a rank that
#: waited past the group's timeout, a peer that ended (or crashed) while this one waited, and
#: ranks that sent different sizes.
_COLLECTIVE_TROUBLE = (
    (re.compile(r"Timed out waiting (\d+)ms for (?:recv|send) operation"), "waited {0} ms in a collective"),
    (
        re.compile(r"Connection closed by peer|Connection reset by peer"),
        "lost its peer in a collective (another rank left it)",
    ),
    (re.compile(r"[Rr]eceived data size doesn't match expected size"), "got another size from its peer"),
    # The store's wait (a group's making, a barrier): torch's DistStoreError, measured on 2.13.
    (re.compile(r"wait timeout after (\d+)ms, keys:"), "waited {0} ms for the other ranks"),
    (
        re.compile(r"[Ss]ocket [Tt]imeout|Timed out after \d+ seconds waiting"),
        "waited in a collective until gloo's timeout",
    ),
)


def collective_trouble(message: str) -> str | None:
    """How a rank's error says it fell out of step in a collective, in words; None otherwise."""
    for pattern, words in _COLLECTIVE_TROUBLE:
        match = pattern.search(message or "")
        if match:
            return words.format(*match.groups())
    return None


_GLOO_WHERE = re.compile(r"\[[^\]]*gloo[^\]]*\.cc:\d+\]\s*")
_GLOO_ADVICE = re.compile(r"\.?\s*This is typically caused by.*$", re.S)


def plain_gloo(message: str) -> str:
    """gloo's message without its source path and its closing advice (the finding says more)."""
    return _GLOO_ADVICE.sub("", _GLOO_WHERE.sub("", message or "")).strip()


def ddp_buckets(target: Any, graphs: Sequence[Graph]) -> DdpBuckets | None:
    """What DDP's optimizer did to a DDP-wrapped target's graphs; None when the target is not
    DDP. Under `dynamo.optimize_ddp` torch's DDPOptimizer splits the one graph Dynamo traced at
    DDP's bucket boundaries, so that each bucket's all-reduce can start while the backward still
    runs: the backend is handed one graph per bucket under the same compile id, with no graph
    break between them (measured: 4 graphs at bucket_cap_mb=1 on 4.2 MiB of parameters, 1 with
    optimize_ddp=false, on 2.13 and 2.14.1)."""
    from torch.nn.parallel import DistributedDataParallel

    if not isinstance(target, DistributedDataParallel):
        return None
    per_frame = Counter(g.compile_id for g in graphs if g.compile_id)
    split = {cid: n for cid, n in per_frame.items() if n > 1}
    cap = getattr(target, "bucket_bytes_cap", 0) / 2**20
    return DdpBuckets(bucket_mb=round(cap, 3), splits=MappingProxyType(split))
