"""What torch itself says a snippet compiles on each rank: run as
`python tests/ranks_truth.py [--config KEY=VALUE] SNIPPET N`, it starts N fresh processes joined by torch.distributed
(gloo, torchrun's environment: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT), and each one loads
SNIPPET, compiles its target under the snippet's SETTINGS behind a counting backend, and makes
every call of inputs() in order, as the contract says a run does. Each rank then runs the same
calls eagerly and compares outputs and gradients (the sum of the outputs' floating tensors,
backward) with torch.allclose. One JSON list is printed, indexed by rank: the graphs the
backend was handed, the recompiles among them (graphs compiled under a compile id whose frame
had compiled before), the graph breaks torch logged (the records of TORCH_LOGS=graph_breaks,
counted, never parsed) and whether eager and compiled agreed. `--config dynamo.NAME=JSON` sets
torch._dynamo.config (inductor.NAME: torch._inductor.config) in each rank before the snippet
loads, as the playground's `--config` does; `--config settings.NAME=JSON` overrides the snippet's
SETTINGS (`settings.dynamic=true`), as the playground's flags do.

Torch's own backend calls, compile ids and log records, not the playground's capture:
tests/test_gallery_ranks.py compares the playground's `check --ranks` report with this.
"""

from __future__ import annotations

import json
import logging
import os
import runpy
import socket
import subprocess
import sys
from typing import Any

TIMEOUT_S = 300


def main(argv: list[str]) -> None:
    config: list[str] = []
    while argv[:1] == ["--config"]:  # dynamo.NAME=JSON, or settings.NAME=JSON over SETTINGS
        config, argv = [*config, argv[1]], argv[2:]
    if argv[:1] == ["--rank"]:
        print(json.dumps(_rank(argv[1], int(argv[2]), config)), flush=True)
        # Out before the interpreter's teardown: a DDP module still holds its gloo group after
        # destroy_process_group, and gloo's threads freed during finalization can abort the
        # process ("terminate called without an active exception", SIGABRT: seen once in CI on
        # 2.14.1) after the answer was computed. The answer is printed; the teardown is not ours
        # to test.
        os._exit(0)
    path, world = argv[0], int(argv[1])
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = []
    for rank in range(world):
        env = {
            **os.environ,
            "RANK": str(rank),
            "LOCAL_RANK": str(rank),
            "WORLD_SIZE": str(world),
            "LOCAL_WORLD_SIZE": str(world),
            "MASTER_ADDR": "127.0.0.1",
            "MASTER_PORT": str(port),
            "OMP_NUM_THREADS": "1",
        }
        cmd = [sys.executable, __file__, *(a for c in config for a in ("--config", c)), "--rank", path, str(rank)]
        procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True))
    ranks = []
    for proc in procs:
        out, _ = proc.communicate(timeout=TIMEOUT_S)
        if proc.returncode != 0:
            raise SystemExit(f"a rank exited with {proc.returncode}")
        ranks.append(json.loads(out.strip().splitlines()[-1]))
    print(json.dumps(ranks))


def _rank(path: str, rank: int, config: list[str]) -> dict[str, Any]:
    import torch
    import torch.distributed as dist
    from torch._dynamo.backends.registry import lookup_backend
    from torch._guards import CompileContext
    from torch._logging._internal import log_registry

    logged = [0]

    class Breaks(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.name.endswith(".__graph_breaks"):
                logged[0] += 1

    torch._logging.set_logs(graph_breaks=True)
    for qname in log_registry.get_log_qnames():
        logging.getLogger(qname).handlers = [Breaks()]

    overrides = {}
    for item in config:
        key, _, value = item.partition("=")
        where, _, name = key.partition(".")
        if where == "settings":
            overrides[name] = json.loads(value)
            continue
        module = torch._dynamo.config if where == "dynamo" else torch._inductor.config
        setattr(module, name, json.loads(value))
    dist.init_process_group("gloo")
    assert dist.get_rank() == rank
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    ns = runpy.run_path(path, run_name="snippet")
    settings = {**ns.get("SETTINGS", {}), **overrides}
    target = ns["model"] if "model" in ns and settings.get("target") != "fn" else ns["fn"]
    real = lookup_backend(settings.get("backend", "inductor"))
    counts = {"graph_count": 0, "recompile_count": 0}

    def backend(gm: Any, example_inputs: Any) -> Any:
        counts["graph_count"] += 1
        cid = CompileContext.current_compile_id()
        if cid is not None and cid.frame_compile_id:
            counts["recompile_count"] += 1
        return real(gm, example_inputs)

    torch._dynamo.reset()
    compiled = torch.compile(
        target, backend=backend, dynamic=settings.get("dynamic"), fullgraph=settings.get("fullgraph", False)
    )
    ours = _calls(compiled, ns["inputs"])
    breaks = logged[0]
    theirs = _calls(target, ns["inputs"])
    agree = all(_close(a, b) for a, b in zip(ours, theirs, strict=True))
    dist.destroy_process_group()
    return {**counts, "graph_break_count": breaks, "equivalence_ok": agree}


def _calls(target: Any, inputs: Any) -> list[list[Any]]:
    """Each call's outputs and the gradients of its floating-point inputs."""
    import torch

    done = []
    for call in inputs():
        args = call if isinstance(call, tuple) else (call,)
        out = target(*args)
        outs = [t for t in (out if isinstance(out, (tuple, list)) else (out,)) if isinstance(t, torch.Tensor)]
        grads = []
        floats = [t for t in outs if t.is_floating_point() and t.requires_grad]
        if floats:
            sum(t.sum() for t in floats).backward()
            grads = [a.grad.clone() for a in args if isinstance(a, torch.Tensor) and a.grad is not None]
            for a in args:
                if isinstance(a, torch.Tensor):
                    a.grad = None
        done.append([t.detach() for t in outs] + grads)
    return done


def _close(a: list[Any], b: list[Any]) -> bool:
    import torch

    return len(a) == len(b) and all(torch.allclose(x, y, rtol=1e-4, atol=1e-5) for x, y in zip(a, b, strict=True))


if __name__ == "__main__":
    main(sys.argv[1:])
