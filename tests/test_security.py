"""No one in where they don't belong: the worker speaks over pipes only, nothing runs a shell,
and nothing is eval'd but the user's own snippet."""

from __future__ import annotations

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted(p for d in ("playground", "tui") for p in (ROOT / d).rglob("*.py"))
#: The one module that opens a socket: a run across ranks asks the kernel for free loopback
#: ports for torch.distributed's stores (gloo's own traffic is torch's, on 127.0.0.1 too).
LOOPBACK_ONLY = "playground/worker/process/rank_group.py"


def test_no_shell_no_eval_no_network_in_our_code():
    offenders = []
    for path in SOURCES:
        text = path.read_text()
        rel = path.relative_to(ROOT)
        if "shell=True" in text:
            offenders.append(f"{rel}: shell=True")
        if re.search(r"(?<![\w.])eval\(", text):
            offenders.append(f"{rel}: eval(")
        if re.search(r"(?<![\w.])exec\(", text) and rel.as_posix() != "playground/worker/run/spine/loading.py":
            offenders.append(f"{rel}: exec(")
        if re.search(r"^\s*(import socket|from socket )", text, re.M) and rel.as_posix() != LOOPBACK_ONLY:
            offenders.append(f"{rel}: socket")
    assert offenders == []


def test_the_ranks_sockets_bind_loopback_and_nothing_else():
    text = (ROOT / LOOPBACK_ONLY).read_text()
    binds = re.findall(r"\.bind\(\(([^,]+),", text)
    assert binds == ['"127.0.0.1"'], binds
    assert "0.0.0.0" not in text and ".listen(" not in text and ".connect(" not in text


def test_the_worker_has_pipes_and_no_sockets(tmp_path):
    from playground.engine.sync import SyncWorker

    with SyncWorker() as worker:
        pid = worker.start().pid
        kinds = set()
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            kinds.add(target.split(":")[0] if ":" in target else "file")
        assert "socket" not in kinds, kinds
        assert "pipe" in kinds
