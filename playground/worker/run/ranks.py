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

Under torchrun (`RankPlace.launch`) this process is one rank of the job and the others are
the job's, on this machine or another: the groups meet in torchrun's own store (the agents'),
each run under a generation of its own (`_agree`), so that the keys of one save's groups are
never read by the next one's; and each rank's report goes through the store to every other
rank (`share_report`), so that each node's report is the whole run's, merged as a run of
forked ranks is.
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import os
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from types import MappingProxyType
from typing import Any

from playground.engine.report.graphs import Graph
from playground.engine.report.ranks import DdpBuckets
from playground.worker.run.spine.request import RankPlace

#: Our own group, while this process is a rank of a run (None otherwise).
_agreements: Any = None
#: Under torchrun: this run's keys in torchrun's store, and this rank's place (None otherwise).
_shared: tuple[Any, RankPlace] | None = None

#: Our keys in torchrun's store live under this prefix (then the job's run id and restart).
STORE_PREFIX = "compile-playground"
#: How often a rank looks in the store for what another rank has put there.
POLL_S = 0.05
#: The key under which each rank says its group is made (say_joined).
JOINED = "compile-playground-joined"
#: The loopback's interface, for gloo's own sockets (Linux's name; the worker runs on Linux).
LOOPBACK_INTERFACE = "lo"


class LaunchError(RuntimeError):
    """This rank cannot take part in torchrun's job's run (said in words for its report)."""


def environment(place: RankPlace, port: int) -> dict[str, str]:
    """The variables torchrun sets for one worker on one node, and gloo's interface: the
    loopback's, so that its pairs' sockets listen nowhere else (by default gloo listens on the
    address the host's name resolves to, another host's way in on most machines)."""
    return {
        "GLOO_SOCKET_IFNAME": LOOPBACK_INTERFACE,
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


def join(
    place: RankPlace, *, port: int, device: str, make_group: bool, side: str = "compiled", content: str = ""
) -> None:
    """Become rank `place.rank`: torchrun's environment, and (unless the code makes its own,
    `make_group` False) the process group of `side` ("compiled" or "reference"): gloo on CPU,
    nccl on CUDA, met in a store that is a file in the group's private folder (`store_path`),
    never a port. Under torchrun, the group of `side` in torchrun's store, for the run of the
    snippet's text `content` (the compiled side agrees on it with the other ranks)."""
    global _agreements
    import torch

    if place.launch is not None:
        _join_launched(place, device, side, content)
        return
    os.environ.update(environment(place, port))
    if "OMP_NUM_THREADS" not in os.environ:
        # torchrun's own default with more than one process per node: one thread each.
        os.environ["OMP_NUM_THREADS"] = "1"
        torch.set_num_threads(1)
    if not make_group:
        _program_meets_in(place, side)
        return
    import torch.distributed as dist

    timeout = datetime.timedelta(seconds=place.collective_timeout_s)
    store = dist.FileStore(store_path(place, side), place.world_size)
    store.set_timeout(timeout)
    dist.init_process_group(
        _backend(place, device), store=store, rank=place.rank, world_size=place.world_size, timeout=timeout
    )
    _agreements = _Later(timeout, store, place)


def failed_path(folder: str, rank: int) -> str:
    """The file by which rank `rank` says its program failed (`say_failed`)."""
    return os.path.join(folder, f"rank{rank}.failed")


def say_failed(place: RankPlace | None, message: str) -> None:
    """This rank's program failed (it would exit non-zero: it raised, or exited so) with an error
    that says `message`: said to the template by a new file in the group's folder as soon as the
    program has ended, which the template looks for while the ranks run, to stop the other ranks
    at once (process/rank_group.py), as torchrun's agent stops a job's other workers when one of
    them fails. Its time is when the rank failed: the first one is the run's cause. A rank whose
    collective lost its peer says nothing: another rank's failure, or end, was the cause. Outside
    a run across ranks, nothing."""
    if place is None or place.world_size < 2 or place.launch is not None or collective_trouble(message):
        return
    # A new file, never through a link or into a FIFO someone put there first.
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    with contextlib.suppress(OSError):
        os.close(os.open(failed_path(place.folder, place.rank), flags, 0o600))


def store_path(place: RankPlace, side: str) -> str:
    """Where the ranks of `side` meet: a file in the group's folder (mkdtemp's, this user's
    alone). torch's TCPStore, the default, listens on every interface whatever address it is
    given (measured on 2.13: `*:PORT` in `ss -ltn`), with no key: anyone who reached it could
    read and rewrite the group's keys. A group's making that waits for a rank that never comes
    gives up about a second later on a FileStore than on a TCPStore (measured on 2.13: 4.0 s
    for a 3 s timeout)."""
    return os.path.join(place.folder, f"{side}.store")


def _program_meets_in(place: RankPlace, side: str) -> None:
    """A program's own `init_process_group()` (env://, as under torchrun) met in a FileStore in
    the group's folder, not in the TCPStore torch would make on MASTER_PORT: that one listens on
    every interface (compat/rendezvous.py). Each rendezvous of the process in a file of its own
    (a program that ends its group and makes another meets afresh, as on a new TCPStore); every
    rank makes them in the same order, as their groups pair only then."""
    import torch.distributed as dist

    from playground.worker.compat import env_rendezvous_in

    made = [0]

    def store(rank: int, world_size: int, timeout: datetime.timedelta) -> Any:
        path = os.path.join(place.folder, f"{side}.program{made[0]}.store")
        made[0] += 1
        file_store = dist.FileStore(path, world_size)
        file_store.set_timeout(timeout)
        return file_store

    env_rendezvous_in(store)


def _backend(place: RankPlace, device: str) -> str:
    import torch

    if device.startswith("cuda") and torch.cuda.is_available():
        local = place.launch.local_rank if place.launch is not None else place.rank
        torch.cuda.set_device(local % torch.cuda.device_count())
        return "nccl"
    return "gloo"


def _join_launched(place: RankPlace, device: str, side: str, content: str) -> None:
    """One rank of torchrun's job: its environment is torchrun's own (inherited); the group of
    `side` is made in torchrun's store under this run's generation."""
    global _agreements, _shared
    import torch.distributed as dist

    launch = place.launch
    assert launch is not None
    if not launch.agent_store:
        raise LaunchError(
            "torchrun was told not to share its store (TORCH_DISABLE_SHARE_RDZV_TCP_STORE=1): the playground "
            "meets the job's other ranks in it; launch without that variable"
        )
    timeout = datetime.timedelta(seconds=place.collective_timeout_s)
    try:
        store = dist.TCPStore(
            launch.master_addr, launch.master_port, is_master=False, timeout=timeout, wait_for_workers=False
        )
    except Exception as exc:  # noqa: BLE001 - said with where it looked
        raise LaunchError(
            f"torchrun's store at {launch.master_addr}:{launch.master_port} did not answer ({exc}): "
            "the node that hosts it (the rendezvous endpoint's) may be gone"
        ) from exc
    base = dist.PrefixStore(f"{STORE_PREFIX}/{launch.run_id}/{launch.restart}/", store)
    generation_file = os.path.join(place.folder, f"rank{place.rank}.generation")
    if side == "compiled":
        generation = _agree(base, place, content)
        with open(generation_file, "w", encoding="ascii") as fh:
            fh.write(str(generation))
        _shared = (dist.PrefixStore(f"run{generation}/", base), place)
    else:  # the eager reference starts once its rank's run has loaded the snippet: agreed by then
        with open(generation_file, encoding="ascii") as fh:
            generation = int(fh.read())
    group_store = dist.PrefixStore(f"run{generation}/{side}/", base)
    dist.init_process_group(
        _backend(place, device), store=group_store, rank=place.rank, world_size=place.world_size, timeout=timeout
    )
    _agreements = _Later(timeout, group_store, place)


def _agree(store: Any, place: RankPlace, content: str) -> int:
    """The generation of this run, the same on every rank: rank 0 starts one for each run it
    is given, with the digest of the snippet's text; each other rank joins the newest one,
    once it is newer than the one it last joined and names the text this rank was given. A
    save that one node sees and another does not (or another file) leaves the rank that waits
    with the error below, at the collective timeout; the next save they both see pairs again."""
    digest = hashlib.sha256(content.encode("utf-8", "surrogateescape")).hexdigest()
    if place.rank == 0:
        generation = int(store.add("generation", 1))
        store.set(f"run{generation}/content", digest)
        store.set("newest", str(generation))
        return generation
    joined = f"joined/{place.rank}"
    last = int(store.get(joined)) if store.check([joined]) else 0
    deadline = time.monotonic() + place.collective_timeout_s
    while True:
        if store.check(["newest"]):
            newest = int(store.get("newest"))
            if newest > last and store.get(f"run{newest}/content").decode() == digest:
                store.set(joined, str(newest))
                return newest
        if time.monotonic() >= deadline:
            raise LaunchError(
                f"rank 0 started no run of this text within {place.collective_timeout_s:g} s "
                "(its node may be gone, or it was given other bytes: every node must run the same file)"
            )
        time.sleep(POLL_S)


def share_report(text: bytes, deliver: Callable[[int, bytes], None], deadline: float) -> None:
    """Under torchrun: this rank's report (`text`, its message's line) into the store, and each
    other rank's handed to `deliver` (rank, line) as it arrives, until every rank's is here or
    `deadline` (time.monotonic()) passes. A rank whose report never comes is said so by the
    merge (rank_group.py). Outside torchrun, nothing."""
    global _shared
    shared, _shared = _shared, None
    if shared is None:
        return
    store, place = shared
    try:
        store.set(f"report/{place.rank}", text)
        waiting = [rank for rank in range(place.world_size) if rank != place.rank]
        while waiting:
            for rank in list(waiting):
                key = f"report/{rank}"
                if store.check([key]):
                    deliver(rank, store.get(key))
                    waiting.remove(rank)
            if not waiting or time.monotonic() >= deadline:
                return
            time.sleep(POLL_S)
    except Exception:  # noqa: BLE001 - the store's node gone: the merge says whose report is missing
        return


class _Later:
    """Our own group, made at its first use: every rank reaches the timing loop's first
    agreement at the same point of the run, so the group's making (itself collective) pairs; a
    run without timing never pays for it. A gloo group of its own on the run's store, apart from
    torch.distributed's groups: the snippet may end those (`destroy_process_group()` in its
    inputs) and the run's loops still agree."""

    def __init__(self, timeout: datetime.timedelta, store: Any, place: RankPlace) -> None:
        self.timeout = timeout
        self.store = store
        self.place = place
        self._group: Any = None

    def group(self) -> Any:
        if self._group is None:
            import torch.distributed as dist

            store = dist.PrefixStore("compile-playground-agreements/", self.store)
            self._group = dist.ProcessGroupGloo(store, self.place.rank, self.place.world_size, self.timeout)
        return self._group


def say_joined() -> None:
    """This rank's group is made: said in the group's store (`wait_until_all_joined` reads it)."""
    if _agreements is None:
        return
    with contextlib.suppress(Exception):
        _agreements.store.set(f"{JOINED}/{_agreements.place.rank}", "1")


def wait_until_all_joined() -> None:
    """Before this rank's process ends: every rank's group made (up to the group's timeout). A
    rank that ends while another still makes its pairs with it fails that one ("Connection
    closed by peer"): the eager references end so, one whose snippet makes no collective at
    once, and its exit closed the sockets of a rank whose reference was still meeting it (a run
    across two nodes under load). Once every rank has its group, an end is harmless: a rank still
    running meets the others only in collectives, which pair. Outside a group of ours, nothing;
    a store gone (its node ended) ends the wait."""
    if _agreements is None:
        return
    place = _agreements.place
    with contextlib.suppress(Exception):
        _agreements.store.wait([f"{JOINED}/{rank}" for rank in range(place.world_size)], _agreements.timeout)


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
    options = dist.AllreduceOptions()
    options.reduceOp = dist.ReduceOp.MAX
    _agreements.group().allreduce([tensor], options).wait()
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
    # The store's wait (a group's making, a barrier): torch's DistStoreError, measured on 2.13;
    # the FileStore's (our groups' store) says only "Wait timeout".
    (re.compile(r"wait timeout after (\d+)ms, keys:"), "waited {0} ms for the other ranks"),
    (re.compile(r"\bWait timeout\b"), "waited for the other ranks until the collective timeout"),
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
