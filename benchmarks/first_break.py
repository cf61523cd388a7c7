"""Time to the first break on a real model: how soon the playground shows what Dynamo decided,
against Dynamo's own time to trace it and against the whole compile.

The snippet: a small `transformers` GPT-2 whose forward hits a graph break (a `print` of a
tensor inside a wrapper), compiled with Inductor (whose backend compile takes many times
Dynamo's trace here). On one warm worker, each save prints:

- first break: from the request to the first report that shows a break (a "traced" report,
  sent as soon as Dynamo hands a graph to the backend, before Inductor compiles it);
- diagnostics: from the request to the "diagnostics" report (every call has run, compiled);
- Dynamo's trace: torch's own compile metrics for the frames traced up to that break
  (`dynamo_s` of the first graph), a lower bound for seeing the break at all (not torch's
  floor, which docs/performance.md defines once for every benchmark).

Then the save's waterfall, the median ms of each phase over the saves (the report's
`timings.save`, measured in the run: request, fork, load, the calls with Dynamo's trace and the
backend's compile inside them, diagnostics, the eager reference, equivalence), with the first
break's moment on the same clock: what stands between a save and its first finding. The timing
runs briefly (--min-run-time 0.01) so that the waterfall rides on it.

With --compare, a second worker with the template's trace warm-up off
(COMPILE_PLAYGROUND_TRACE_WARMUP=0: playground/worker/process/trace_warmup.py) runs the same
saves, alternated save by save with the first, so that both meet the machine's drift alike; each
save waits --pause seconds (3) first, so that the other worker's template has done its work
between runs (its imports after a first run take seconds of CPU) rather than doing it during this
save's trace.

    python benchmarks/first_break.py [--saves 3] [--backend inductor] [--compare]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
import time

from playground.engine.client import WorkerClient
from playground.engine.events import DiagnosticsEvent
from playground.engine.report.save_waterfall import INSIDE_PHASES, WATERFALL_PHASES
from playground.engine.run_request import RunFlags, RunRequest
from playground.engine.settings import Settings
from playground.engine.snippet import prepared_as_given

SNIPPET = """
import torch
from transformers import GPT2Config, GPT2Model

torch.manual_seed(0)
gpt2 = GPT2Model(GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=256, n_positions=64))

def fn(ids):
    h = gpt2(ids).last_hidden_state
    print("norm", h.norm())  # the graph break  # edit {n}
    return gpt2((ids + 1) % 256).last_hidden_state + h

def inputs():
    torch.manual_seed(1)
    return [torch.randint(0, 256, (2, 16))]
"""


async def one_save(client: WorkerClient, path: str, n: int, settings: Settings) -> dict[str, float | None]:
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(SNIPPET.format(n=n))
    started = time.perf_counter()
    seen: dict[str, float | None] = {"first_break": None, "diagnostics": None}

    def on_event(event: object) -> None:
        if not isinstance(event, DiagnosticsEvent):
            return
        now = time.perf_counter() - started
        if event.report.graph_break_count and seen["first_break"] is None:
            seen["first_break"] = now
        if event.report.stage == "diagnostics" and seen["diagnostics"] is None:
            seen["diagnostics"] = now

    flags = RunFlags(timing=True, min_run_time=0.01)  # the waterfall rides on the timings
    result = await client.run(RunRequest(prepared_as_given(path, settings), flags), on_event)
    phases = result.report.compile_phases
    seen["dynamo_first"] = phases[0].dynamo_s if phases else None
    timings = result.report.timings
    save = timings.save if timings is not None else None
    if save is not None:
        for phase in save.phases:
            seen[f"ms:{phase.name}"] = phase.duration_ms
    seen["complete"] = time.perf_counter() - started
    seen["breaks"] = result.report.graph_break_count
    if result.report.error is not None:  # a benchmark of an error measures nothing: say so
        raise SystemExit(f"first_break.py: the benchmark's snippet failed: {result.report.error.message}")
    return seen


async def _started(env: dict[str, str]) -> WorkerClient:
    """A worker started with `env` added to this process's environment (its client passes it on)."""
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        client = WorkerClient(timeout_s=600)
        await client.start()
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return client


async def main(saves: int, backend: str, compare: bool = False, pause: float = 3.0) -> None:
    folder = tempfile.mkdtemp(prefix="first-break-")
    routes = {"trace warm-up on": {}}
    if compare:
        routes["trace warm-up off"] = {"COMPILE_PLAYGROUND_TRACE_WARMUP": "0"}
    paths = {name: os.path.join(folder, f"gpt2_break_{i}.py") for i, name in enumerate(routes)}
    clients = {name: await _started(env) for name, env in routes.items()}
    rows: dict[str, list[dict[str, float | None]]] = {name: [] for name in routes}
    print(f"load average at the start: {os.getloadavg()[0]:.2f}")
    try:
        settings = Settings(backend=backend, cold=True)  # every save a true cold compile
        print(
            f"{'route':<18} {'save':<5} {'first break':>12} {'Dynamo trace':>13} {'diagnostics':>12} {'complete':>10}"
        )
        for n in range(saves):
            for name, client in clients.items():  # alternated: the machine's drift hits both
                if compare:
                    await asyncio.sleep(pause)  # the other template's work between runs done
                row = await one_save(client, paths[name], n, settings)
                rows[name].append(row)
                print(
                    f"{name:<18} {n + 1:<5} {_s(row['first_break']):>12} {_s(row['dynamo_first']):>13} "
                    f"{_s(row['diagnostics']):>12} {_s(row['complete']):>10}",
                    flush=True,
                )
    finally:
        for client in clients.values():
            await client.close()
        for path in paths.values():
            if os.path.exists(path):
                os.unlink(path)
        os.rmdir(folder)
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")
    for name, done in rows.items():
        if compare:
            print(f"\n{name}:")
        print_waterfall(done)
        firsts = [r["first_break"] for r in done if r["first_break"] is not None]
        diags = [r["diagnostics"] for r in done if r["diagnostics"] is not None]
        if firsts and diags:
            print(
                f"\nmedian: first break {statistics.median(firsts):.2f} s, diagnostics {statistics.median(diags):.2f} s "
                f"(the break shown {statistics.median(diags) / statistics.median(firsts):.1f}x sooner than the "
                "whole compile)"
            )


def print_waterfall(rows: list[dict[str, float | None]]) -> None:
    """The median ms of each phase over the saves, in a save's order, then the first break."""
    print("\nsave waterfall (median ms over the saves; trace and backend lie inside calls):")
    for name in WATERFALL_PHASES:
        values = [v for r in rows if isinstance(v := r.get(f"ms:{name}"), float | int)]
        if values:
            indent = "    " if name in INSIDE_PHASES else "  "
            print(f"{indent}{name:<12} {statistics.median(values):9.1f}")
    firsts = [r["first_break"] for r in rows if r["first_break"] is not None]
    if firsts:
        print(f"  first break shown at {statistics.median(firsts) * 1e3:.1f} ms from the request")


def _s(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f} s"


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--saves", type=int, default=3)
    parser.add_argument("--backend", default="inductor")
    parser.add_argument("--compare", action="store_true", help="and a worker without the trace warm-up, alternated")
    parser.add_argument("--pause", type=float, default=3.0, help="seconds before each save with --compare")
    args = parser.parse_args()
    asyncio.run(main(args.saves, args.backend, args.compare, args.pause))
