"""Save-to-findings latency under Inductor: the findings lane against Dynamo's own trace.

For a save that changes the graph (a constant in the loss changes each save, so Inductor's
caches miss), side by side in one run, interleaved (the machine is shared and noisy):

- dynamo: Dynamo's own trace of the same code in a warm process (torch and transformers
  imported, the model built, one eager compile done): per save, reset, torch.compile(fn,
  backend="eager") and the calls of inputs(), each with its backward, as the playground makes them;
- findings: a warm worker (the client, as `watch` and the app use it) from the request to the
  findings lane's FindingsEvent (Dynamo's graphs, breaks, guards, recompiles);
- complete: the same run's complete report;
- complete, no lane: the same kind of save with early findings off (the report's time before
  the lane existed), to show what the lane costs the complete report.

Then a comment-only save (the same code: the caches hit, and the rule gives it no lane) and its
complete time, which is what deciding "no lane for a cache-hitting save" rests on.

    python benchmarks/findings_latency.py [--saves 3] [--model llama|mlp] [--settle S]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from playground.engine.client import WorkerClient
from playground.engine.events import FindingsEvent
from playground.engine.findings import changed
from playground.engine.run_request import RunFlags, RunRequest
from playground.engine.snippet import prepare_run

LLAMA = """
import torch
from transformers import LlamaConfig, LlamaForCausalLM

SETTINGS = {{"backend": "inductor", "target": "fn"}}
SCALE = {scale}  # {comment}

torch.manual_seed(0)
config = LlamaConfig(
    num_hidden_layers=2, hidden_size=64, intermediate_size=128, num_attention_heads=4,
    num_key_value_heads=2, vocab_size=256, max_position_embeddings=128, use_cache=False,
)
model = LlamaForCausalLM(config)


def fn(ids):
    return model(input_ids=ids, labels=ids).loss * SCALE


def inputs():
    tokens = torch.Generator().manual_seed(1)
    yield torch.randint(0, 256, (2, 16), generator=tokens)
    yield torch.randint(0, 256, (2, 16), generator=tokens)
"""

MLP = """
import torch

SETTINGS = {{"backend": "inductor"}}
SCALE = {scale}  # {comment}

torch.manual_seed(0)
model = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.GELU()) for _ in range(8)])


def fn(x):
    return model(x).sum() * SCALE


def inputs():
    torch.manual_seed(1)
    return [torch.randn(8, 64), torch.randn(8, 64)]
"""

#: Dynamo's own trace in a warm process: reads a scale per line, answers the seconds.
DYNAMO = r"""
import sys, time, types
import torch
path, template = sys.argv[1], open(sys.argv[2]).read()

def load(scale):
    module = types.ModuleType("bench_snippet")
    module.__file__ = path
    code = template.format(scale=scale, comment="dynamo")
    open(path, "w").write(code)
    exec(compile(code, path, "exec"), module.__dict__)
    return module

def trace(module):
    torch._dynamo.reset()
    compiled = torch.compile(module.fn, backend="eager")
    started = time.perf_counter()
    for call in module.inputs():
        out = compiled(*(call if isinstance(call, tuple) else (call,)))
        out.backward()
    return time.perf_counter() - started

trace(load(0.5))  # the warm-up: the imports, Dynamo's first compile
print("ready", flush=True)
for line in sys.stdin:
    module = load(float(line))  # the model is built before the clock starts, as a warm tool has it
    print(f"{trace(module):.4f}", flush=True)
"""


def _load() -> str:
    with open("/proc/loadavg") as fh:
        return " ".join(fh.read().split()[:3])


async def _run(client: WorkerClient, path: Path, text: str, *, lane: bool) -> dict[str, float | None]:
    path.write_text(text)
    prepared = prepare_run(str(path), {})
    flags = RunFlags(timing=True, min_run_time=0.05, early_findings=lane)
    started = time.perf_counter()
    found: list[tuple[float, FindingsEvent]] = []

    def on_event(event: object) -> None:
        if isinstance(event, FindingsEvent):
            found.append((time.perf_counter() - started, event))

    result = await client.run(RunRequest(prepared, flags), on_event)
    complete = time.perf_counter() - started
    report = result.report
    first = found[0] if found else None
    return {
        "findings": first[0] if first else None,
        "complete": complete,
        "equal": (not changed(first[1].report, report)) if first else None,
        "differ": list(changed(first[1].report, report)) if first else [],
        "error": report.error.message[:80] if report.error else None,
        "graphs": report.graph_count,
    }


def _median(values: list[float]) -> str:
    return f"{statistics.median(values):6.2f} s" if values else "     - "


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--saves", type=int, default=3)
    parser.add_argument("--model", choices=("llama", "mlp"), default="llama")
    parser.add_argument("--settle", type=float, default=2.0, help="seconds of quiet before each measure")
    parser.add_argument(
        "--json", metavar="FILE", help="also write the rows to FILE as JSON (benchmarks/speed.py reads it)"
    )
    args = parser.parse_args()
    template = LLAMA if args.model == "llama" else MLP
    folder = Path(tempfile.mkdtemp(prefix="findings-latency-"))
    snippet = folder / "snippet.py"
    (folder / "template.txt").write_text(template)
    load_before = _load()
    print(f"load before: {load_before}  cpus: {len(os.sched_getaffinity(0))}  model: {args.model}")
    dynamo = subprocess.Popen(
        [sys.executable, "-c", DYNAMO, str(folder / "dynamo_snippet.py"), str(folder / "template.txt")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert dynamo.stdout is not None and dynamo.stdin is not None
    client = WorkerClient(timeout_s=600)
    rows: list[dict[str, float | None]] = []
    try:
        await client.start()
        assert dynamo.stdout.readline().strip() == "ready"
        # Warm the worker: the imports the snippet makes (then preimported), Inductor's start-up.
        for scale in (0.25, 0.125):
            await _run(client, snippet, template.format(scale=scale, comment="warm-up"), lane=True)
        # Scales no earlier run of this script used: Inductor's caches are on disk and outlive
        # the run, and a scale compiled before would hit them.
        nonce = (time.time_ns() // 1000 % 10**9) / 10**12
        for save in range(args.saves):
            scale = 1.0 + save / 100 + nonce
            # Each measure starts on a settled machine: after a run the worker's template forks
            # and warms the next run's child (about 0.5 s of CPU), which slowed whichever side
            # came next (Dynamo's own trace read 0.48 s or 0.78 s by where it fell). A user
            # reads the report between saves.
            await asyncio.sleep(args.settle)
            dynamo.stdin.write(f"{scale + 0.5}\n")
            dynamo.stdin.flush()
            own = float(dynamo.stdout.readline())
            await asyncio.sleep(args.settle)
            lane = await _run(client, snippet, template.format(scale=scale, comment=f"save {save}"), lane=True)
            await asyncio.sleep(args.settle)
            before = await _run(client, snippet, template.format(scale=scale + 0.25, comment="no lane"), lane=False)
            row = {"dynamo": own, **lane, "no_lane": before["complete"]}
            rows.append(row)
            print(
                f"save {save}: dynamo {own:6.2f} s  findings {lane['findings'] or float('nan'):6.2f} s  "
                f"complete {lane['complete']:6.2f} s  complete, no lane {before['complete']:6.2f} s  "
                f"findings == complete: {lane['equal']}{'' if lane['equal'] else ' ' + str(lane['differ'])}  load {_load()}",
                flush=True,
            )
        comment = await _run(
            client, snippet, template.format(scale=1.0 + nonce, comment="only a comment changed"), lane=True
        )
    finally:
        await client.close()
        dynamo.stdin.close()
        dynamo.wait(30)
        shutil.rmtree(folder, ignore_errors=True)
    own = [float(r["dynamo"]) for r in rows if r["dynamo"] is not None]
    first = [float(r["findings"]) for r in rows if r["findings"] is not None]
    done = [float(r["complete"]) for r in rows if r["complete"] is not None]
    plain = [float(r["no_lane"]) for r in rows if r["no_lane"] is not None]
    print()
    print(f"median over {len(rows)} cache-missing saves ({args.model}, backend inductor):")
    print(f"  Dynamo's own trace (warm process, backend eager): {_median(own)}")
    print(f"  save -> first findings (findings lane):           {_median(first)}", end="")
    if own and first:
        print(f"   {statistics.median(first) / statistics.median(own):.2f}x Dynamo's own (goal <= 1.5x)")
    else:
        print()
    print(f"  save -> complete report, with the lane:           {_median(done)}", end="")
    if plain and done:
        print(f"   {statistics.median(done) / statistics.median(plain):.2f}x without (goal <= 1.1x)")
    else:
        print()
    print(f"  save -> complete report, no lane:                 {_median(plain)}")
    early = "none" if comment["findings"] is None else f"{comment['findings']:.2f} s"
    print(
        f"  comment-only save (caches hit, no lane by the rule): complete {comment['complete']:.2f} s, findings {early}"
    )
    load_after = _load()
    print(f"load after: {load_after}")
    print(json.dumps({"rows": rows, "comment_only": comment}))
    if args.json:
        summary = {"rows": rows, "comment_only": comment, "load_before": load_before, "load_after": load_after}
        Path(args.json).write_text(json.dumps(summary))


if __name__ == "__main__":
    asyncio.run(main())
