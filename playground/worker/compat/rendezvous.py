"""torch.distributed's `env://` rendezvous, met in a store of ours: the handler a program's own
`init_process_group()` reaches when it names no store and no init_method (torchrun's way).

torch's own handler makes a TCPStore on MASTER_ADDR:MASTER_PORT, and rank 0's listens on every
interface whatever MASTER_ADDR says (measured on 2.13: `[::]:PORT` in /proc/net/tcp6 with
MASTER_ADDR=127.0.0.1), with no key. The handlers live in a private dict
(`torch.distributed.rendezvous._rendezvous_handlers`; `register_rendezvous_handler` refuses a
scheme twice), checked on 2.13 and 2.14.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any
from urllib.parse import parse_qsl, urlparse


def env_rendezvous_in(make_store: Callable[[int, int, timedelta], Any]) -> None:
    """`env://` rendezvous in this process answered with `make_store(rank, world_size, timeout)`,
    rank and world size read as torch's own handler reads them (the URL's query, else RANK and
    WORLD_SIZE)."""
    # `torch.distributed.rendezvous` is also a function of torch.distributed's: the module by name.
    torch_rendezvous = importlib.import_module("torch.distributed.rendezvous")
    from torch.distributed.constants import default_pg_timeout

    def handler(url: str, timeout: timedelta = default_pg_timeout, **_: Any) -> Iterator[tuple[Any, int, int]]:
        query = dict(parse_qsl(urlparse(url).query))
        rank = int(query.get("rank") or os.environ["RANK"])
        world_size = int(query.get("world_size") or os.environ["WORLD_SIZE"])
        yield make_store(rank, world_size, timeout), rank, world_size
        # As torch's own: an env:// group is not made again from the same rendezvous.
        raise RuntimeError("Unable to perform re-rendezvous using env:// method")

    torch_rendezvous._rendezvous_handlers["env"] = handler
