"""What the template reads back is the run's own, and nothing of a run listens where another
host could reach it: a rank cannot rewrite another rank's report, a FIFO the snippet puts where
`--code`'s report once was neither forges it nor holds the template past its timeout, and a
`--ranks 2` run has no listening socket on a non-loopback address (read from /proc/net/tcp and
tcp6 while it runs, for the run's own processes only: the machine is shared)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

from tests.engine.test_ranks import _check

ROOT = Path(__file__).resolve().parents[2]

#: Rank 1 leaves a process behind that, for a few seconds, writes a report of 77 graphs over
#: rank 0's wherever a group's folder is.
FORGER = """\
import glob
import json
import os
import tempfile
import time

import torch
import torch.distributed as dist

SETTINGS = {"backend": "eager", "ranks": 2}

FORGED = json.dumps({"event": "report", "report": {"graph_count": 77, "settings": {}}})


def forge():
    end = time.monotonic() + 6
    while time.monotonic() < end:
        for folder in glob.glob(os.path.join(tempfile.gettempdir(), "compile-playground-*")):
            try:
                with open(os.path.join(folder, "forged.tmp"), "w") as fh:
                    fh.write(FORGED)
                os.replace(os.path.join(folder, "forged.tmp"), os.path.join(folder, "rank0.json"))
            except OSError:
                pass
        time.sleep(0.001)
    os._exit(0)


def fn(x):
    return x.sin()


def inputs():
    if dist.get_rank() == 1 and os.fork() == 0:
        forge()
    yield torch.ones(4)
"""


def test_a_rank_cannot_rewrite_another_ranks_report(tmp_path: Path) -> None:
    code, report, _ = _check(tmp_path, FORGER, "--no-timing", timeout=60)
    assert code == 0, report["error"]
    graphs = [rank["graph_count"] for rank in report["ranks"]]
    # Both ranks compiled the same function once: what each found, never the forged 77.
    assert 77 not in graphs and graphs[0] == graphs[1] == report["graph_count"] >= 1, graphs


#: With --code, a process the snippet leaves behind puts a FIFO where the run's report file was,
#: and writes a report of 77 graphs into it for whoever opens it; with no reader it waits.
FIFO = """\
import glob
import json
import os
import tempfile
import time

import torch

SETTINGS = {"backend": "eager"}

FORGED = json.dumps({"event": "report", "report": {"graph_count": 77, "settings": {}}})


def plant():
    end = time.monotonic() + 8
    while time.monotonic() < end:
        for folder in glob.glob(os.path.join(tempfile.gettempdir(), "compile-playground-code-*")):
            for name in ("report.json", "report.json.part", "code.json"):
                path = os.path.join(folder, name)
                try:
                    os.mkfifo(path + ".fifo")
                    os.replace(path + ".fifo", path)
                except OSError:
                    continue
                if os.fork() == 0:  # a writer that waits for the template to open it
                    with open(path, "w") as fh:
                        fh.write(FORGED)
                    os._exit(0)
        time.sleep(0.005)
    os._exit(0)


if os.fork() == 0:
    plant()


def fn(x):
    return x.sin()


def inputs():
    yield torch.ones(4)
"""


def test_a_fifo_where_the_code_runs_report_was_neither_forges_it_nor_holds_the_run(tmp_path: Path) -> None:
    code, report, elapsed = _check(tmp_path, FIFO, "--code", "--no-timing", "--timeout", "30", timeout=30)
    assert report["graph_count"] != 77 and report["graph_count"] >= 1, report
    assert report["error"] is None, report["error"]
    assert report["dynamo_code_note"], report
    assert elapsed < 30 + 15


#: Both ranks wait 3 s inside their groups, compiled and eager alike, so the test sees every
#: listener the run opens (the timing loop's own group too: timing is on).
HOLD = """\
import time

import torch
import torch.distributed as dist

SETTINGS = {"backend": "eager", "ranks": 2}


def fn(x):
    total = torch.cos(x) + 1
    dist.all_reduce(total)
    return total * 2


def inputs():
    dist.barrier()
    time.sleep(3)
    yield torch.ones(4)
"""


def _listening(pids: set[int]) -> list[str]:
    """The local addresses on which any of `pids` listens (TCP, IPv4 and IPv6)."""
    inodes: set[str] = set()
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                with_link = os.readlink(f"/proc/{pid}/fd/{fd}")
                if with_link.startswith("socket:["):
                    inodes.add(with_link[8:-1])
        except OSError:
            continue
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:  # 0A: LISTEN
                found.append(fields[1])
    return found


def _loopback(address: str) -> bool:
    host = address.split(":")[0]
    if len(host) == 8:  # IPv4, little-endian hex: 127.x.x.x has 7F as its last byte
        return host.endswith("7F")
    # IPv6: ::1, or 127.x.x.x mapped (::ffff:127.x.x.x)
    return host == "00000000000000000000000001000000" or (
        host.startswith("0000000000000000FFFF0000") and host.endswith("7F")
    )


def _descendants(root: int) -> set[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(entry))
    found, todo = set(), [root]
    while todo:
        pid = todo.pop()
        found.add(pid)
        todo += children.get(pid, [])
    return found


def test_a_ranks_run_listens_on_no_address_but_the_loopback(tmp_path: Path) -> None:
    path = tmp_path / "snippet.py"
    path.write_text(textwrap.dedent(HOLD))
    proc = subprocess.Popen(
        [sys.executable, "-m", "playground", "check", str(path), "--json", "--timeout", "60"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
        env={**os.environ, "TMPDIR": str(tmp_path)},
    )
    seen: list[str] = []
    out: list[bytes] = []
    reader = threading.Thread(target=lambda: out.append(proc.stdout.read()))  # type: ignore[union-attr]
    reader.start()
    try:
        while proc.poll() is None:
            seen += _listening(_descendants(proc.pid))
            time.sleep(0.02)
    finally:
        proc.kill()
        reader.join(10)
    report: dict[str, Any] = json.loads(out[0])
    assert report["error"] is None, report["error"]
    assert seen, "no listener seen at all: the test saw nothing of the run"
    assert [a for a in seen if not _loopback(a)] == [], sorted(set(seen))
