"""What the template does to itself before it forks: warm Dynamo (and Inductor) on a tiny
snippet, hide its heap from the garbage collector, and probe that a forked child still runs a
parallel op. Worker-side."""

from __future__ import annotations

import gc
import os
import select
import sys
import tempfile
from typing import Any

from playground.engine.run_request import RunFlags, RunRequest
from playground.engine.settings import Settings
from playground.engine.snippet import PreparedRun, SnippetSource
from playground.worker.process import procs
from playground.worker.process.output import OutputCapture
from playground.worker.run.spine.request import WorkerRequest

WARMUP_SNIPPET = """
import torch

def fn(x, n):
    y = torch.sin(x) * n
    print("warm-up")
    return torch.cos(y).sum()

def inputs():
    return [(torch.ones(4, requires_grad=True), 2), (torch.ones(3, requires_grad=True), 3)]
"""


def warm(capturer: Any, backend: str, inductor_started: bool) -> bool:
    """Run a tiny snippet through the whole experiment here, then forget it: children inherit
    Dynamo's and (for inductor) Inductor's one-time start-up, and nothing of the run itself
    (reset and counters are cleared again in every child). True when the run used Inductor."""
    from playground.worker import compat
    from playground.worker.run.experiment import run_experiment

    used_inductor = False
    fd, path = tempfile.mkstemp(prefix="compile-playground-warmup-", suffix=".py")
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(WARMUP_SNIPPET)
        source = SnippetSource(path, WARMUP_SNIPPET, "")
        prepared = PreparedRun(path, Settings(backend=backend), source=source)
        request = WorkerRequest(RunRequest(prepared, RunFlags(timing=True, min_run_time=0.001)), warmup=True)
        with OutputCapture():
            try:
                # Torch's process-wide counters given back after it: a run forked later names
                # what Dynamo installs (G['__builtins_dict___16'], in its guards) as a process
                # that ran no warm-up, or another one, would (a spare's, Inductor's between runs).
                with compat.process_counters_kept():
                    outcome = run_experiment(capturer, request, lambda event: None, inductor_started=inductor_started)
                used_inductor = outcome.used_inductor
            except Exception as exc:  # noqa: BLE001 - a warm-up failure only costs speed
                print(f"compile-playground: {backend} warm-up failed: {exc!r}", file=sys.stderr)
    finally:
        os.unlink(path)
        compat.clear_run_state()
    return used_inductor


def freeze() -> None:
    """Move everything the template holds out of the garbage collector's sight: a child's
    collection would otherwise write to every object's header and copy the template's whole
    heap, page by page (measured: a third of a small run's time)."""
    gc.collect()
    gc.freeze()


def fork_probe(timeout_s: float = 10.0) -> bool:
    """Fork a child that runs a parallel op (a million-element add and a 256x256 matmul)
    and see that it finishes: a child of a process whose OpenMP pool has started hangs on
    its first parallel op (../shared/TORCH_NOTES.md)."""
    import torch

    pid = os.fork()
    if pid == 0:  # pragma: no cover - the probe child
        try:
            a = torch.ones(1_000_000)
            (a + a).sum()
            b = torch.ones(256, 256)
            (b @ b).sum()
        finally:
            os._exit(0)
    pidfd = os.pidfd_open(pid)
    try:
        finished = bool(select.select([pidfd], [], [], timeout_s)[0])
    finally:
        os.close(pidfd)
    if not finished:
        procs.kill_all([pid])
    _, status = os.waitpid(pid, 0)
    return finished and os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def start_thread_pools() -> None:
    """What a spare child runs after the warm-up: ops that start OpenMP's pool (in a child,
    which is never forked again, that is safe, and it saves the run the start-up)."""
    import torch

    x = torch.ones(256, 256)
    torch.nn.functional.gelu(x @ x).sum()


def spare_experiment_wanted() -> bool:
    """Whether a spare child re-runs the warm-up experiment (0.5 s of CPU per spare, one spare
    after every run; the rest of its warm-up, the thread pools and the heap, 0.1 s) to fault in
    the template's pages its first compile would write. Not when the machine is busier than its
    cores (a workshop server, a shared box): there the experiment mostly did not finish before
    the next save came, and its spare was dropped unused (measured at a load of 12 on 2 cores:
    5 of 9 spares, each 0.5 s of CPU, with saves 2.5 s apart), while the runs took as long
    without it, within that machine's noise. COMPILE_PLAYGROUND_SPARE_WARMUP=experiment or
    =pools decides it either way."""
    asked = os.environ.get("COMPILE_PLAYGROUND_SPARE_WARMUP", "")
    if asked in ("experiment", "pools"):
        return asked == "experiment"
    try:
        return os.getloadavg()[0] < (os.cpu_count() or 1)
    except OSError:
        return True
