"""The worker: a template process that imports torch once, and one forked child per run.

Started by playground.engine.client as `python -m playground.worker`. The protocol is one JSON object
per line in each direction (no pickle: nothing of the user's crosses the boundary but JSON).

Why a child per run: a snippet can change anything in the process it runs in (torch's config
modules, default dtype, grad mode, RNG, sys.modules, sys.path, the working directory, the
environment, signal handlers, threads). A forked child starts from the template's memory, which
no run ever touches, and takes all of that with it when it exits: every save is a fresh process
as far as the snippet can tell, at the price of one fork (measured in benchmarks/latency.py
and README.md). A cancel or a timeout is a kill of the child, a crash loses only the child, and
memory does not grow across runs.

What keeps forking safe: the template is single-threaded when it forks (no reader thread; it
multiplexes the channel and the child with select), never touches CUDA (NVML answers
is_available), and warms Dynamo and Inductor only on 4-element tensors, which stay below
OpenMP's parallel grain, so no thread pool exists to be copied in a broken state
(../shared/TORCH_NOTES.md: a child forked after a large op hangs on its first parallel op).

The snippet is arbitrary code: it may print megabytes, read stdin or write straight to file
descriptor 1. So the first thing the worker does is move the channel off fds 0 and 1 onto
private descriptors and point 0 at /dev/null; during a run fds 1 and 2 go to a temporary file
that is read back (truncated) into the report. Nothing the snippet does can corrupt the channel.

The parts, one job each, in process/: template.py (the template process and its request loop),
spare.py (the child forked ahead of its run), child.py (what a run's child does, and what it
inherits), reference_forks.py (the run's reference processes), warmup.py (the warm-up, gc.freeze
and the fork probe), stragglers.py (killing what runs left behind), output.py (the snippet's
output file), channel.py (the pipe and its framing).
"""

from __future__ import annotations

import faulthandler
import os
import signal
import sys

from playground.engine import scratch
from playground.worker.process import procs
from playground.worker.process.channel import Channel
from playground.worker.process.template import Template


def main() -> None:
    # Before torch is imported: CUDA availability from NVML (a CUDA context in the template would
    # make every forked child's CUDA unusable), and Inductor compiling in process rather than in a
    # pool of compile workers that would be forked with us.
    ours = {"PYTORCH_NVML_BASED_CUDA_CHECK": "1", "TORCHINDUCTOR_COMPILE_THREADS": "1"}
    # Torch reads them at its import (the template's): a run's code sees the environment python
    # would give it (run/spine/loading.py environ_as_given), its subprocesses too.
    # (setdefault: a worker that starts itself over, reexec.py, has them set by its first start.)
    os.environ.setdefault(scratch.ADDED_ENV, ",".join(name for name in ours if name not in os.environ))
    for name, value in ours.items():
        os.environ.setdefault(name, value)
    channel = Channel()
    # A segfault or a hung run dumps the Python stack to stderr, which the client drains and
    # reads the snippet's line from (a private copy of fd 2: during a run fd 2 points at the
    # snippet's output file).
    crash_log = os.fdopen(os.dup(2), "w")
    faulthandler.enable(file=crash_log, all_threads=False)
    # The client may die without a word (SIGKILL): take the runs with us. Orphans of a snippet
    # that left our process group (start_new_session) come back to us and are swept.
    procs.die_with_parent(signal.SIGTERM)
    procs.become_subreaper()
    # The app draws while we compile: the compiler gets what the UI leaves.
    try:
        os.nice(int(os.environ.get("COMPILE_PLAYGROUND_NICE", "5")))
    except (OSError, ValueError):
        pass
    template = Template(channel, crash_log)

    def leave() -> None:
        # After the runs are killed: what they left in TMPDIR goes too (the client removes it
        # as well, but a client killed by SIGKILL never does).
        template.shutdown()
        scratch.remove(os.environ.get(scratch.ENV))

    def on_term(signum: int, frame: object) -> None:
        leave()
        os._exit(128 + signum)

    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, on_term)
    template.start()
    try:
        template.serve()
    finally:
        leave()
    # Everything below us is gone and the channel has said its last: no interpreter teardown for
    # a client that waits on our exit (after a compile, torch's atexit hooks and module teardown
    # took 2 to 4 s here, against 0.1 s for this exit).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
