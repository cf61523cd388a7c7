"""Save-to-diagnostics latency: the warm `watch` worker against torch's own floor, against the
worker without isolation, and against the route people take today.

- fork: `compile-playground watch --json-lines`, already running, sees an atomic save and prints
  the diagnostics line; each run is a child forked from the torch template (the design).
- in-process: the same with COMPILE_PLAYGROUND_ISOLATION=none, every run in the template itself,
  as the first version ran them (fast, but runs leak state into each other).
- snapshot/restore: the in-process route plus what recording and putting back the state a
  snippet can change costs (measured in the floor process on every save; see SNAPSHOT below).
- floor: torch's floor as docs/performance.md defines it (one definition for every benchmark):
  per save, reset, load, compile and calls with the three log artifacts on, in a warm process
  with no watcher, no pipe and no UI: what any warm tool must spend.
- floor*: the floor with glibc's malloc set as the worker sets it in each run's child (freed
  memory kept; playground/worker/process/memory.py): a variant printed beside it, never the
  floor the ratios are judged by.

The fork route runs with its timings on (--min-run-time 0.01, after the diagnostics line), so
that its complete line carries the save's waterfall (`timings.save`): the median of each phase
over the saves is printed after the ratios, with "client" (the file event to the request, and
the diagnostics event to its line) worked out on the benchmark's clock (time.monotonic:
CLOCK_MONOTONIC, the worker's too).
- cold: a fresh `python` with TORCH_LOGS=graph_breaks,recompiles,guards: today's route.

All are interleaved in one run (the machine is shared and noisy) and their ratios printed.

    python benchmarks/latency.py [--saves 5] [--cold 3] [--backends eager,inductor]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from pathlib import Path

from playground.engine.report.save_waterfall import WATERFALL_PHASES

ROOT = Path(__file__).resolve().parents[1]

SNIPPET = """
import torch

SETTINGS = {{"backend": "{backend}"}}

def fn(x):
    y = torch.nn.functional.gelu(x) * 2  # edit {n}
    if y.sum() > 0:
        return y.cos()
    return y.sin()

def inputs():
    torch.manual_seed(0)
    return [torch.randn(32, 32), torch.randn(48, 32)]
"""

COLD = """
import importlib.util, sys, torch
spec = importlib.util.spec_from_file_location("snip", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
target = getattr(mod, "model", None) or mod.fn
compiled = torch.compile(target, backend=sys.argv[2])
for call in mod.inputs():
    compiled(*(call if isinstance(call, tuple) else (call,)))
"""


def cold_route(path: Path, backend: str) -> float:
    env = dict(os.environ, TORCH_LOGS="graph_breaks,recompiles,guards")
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", COLD, str(path), backend],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return time.perf_counter() - start


#: The floor: a warm process that runs each save as the worker's inner loop does, without the
#: worker. It also records and restores what the snapshot/restore design would have to, and
#: reports that cost separately. It reads a path per line and answers with two timings.
FLOOR = """
import importlib, logging, os, random, signal, sys, time, warnings, torch
torch._logging.set_logs(graph_breaks=True, recompiles=True, guards=True)
sink = logging.NullHandler()
for q in torch._logging._internal.log_registry.get_log_qnames():
    logging.getLogger(q).handlers = [sink]
CONFIGS = [importlib.import_module(m) for m in (
    "torch._dynamo.config", "torch._inductor.config", "torch._functorch.config", "torch.fx.experimental._config")]

def snapshot():
    return ([c.save_config() for c in CONFIGS], torch.get_default_dtype(), torch.is_grad_enabled(),
            torch.is_autocast_enabled("cpu"), torch.is_anomaly_enabled(), torch.are_deterministic_algorithms_enabled(),
            torch.get_num_threads(), torch.get_float32_matmul_precision(), torch.backends.mkldnn.enabled,
            torch.random.get_rng_state(), random.getstate(), dict(os.environ), os.getcwd(), list(sys.path),
            set(sys.modules), list(warnings.filters), logging.getLogger().level, list(logging.getLogger().handlers),
            {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGUSR1, signal.SIGALRM)})

def restore(s):
    for c, saved in zip(CONFIGS, s[0]):
        c.load_config(saved)
    torch.set_default_dtype(s[1]); torch.set_grad_enabled(s[2]); torch.set_autocast_enabled("cpu", s[3])
    torch.autograd.set_detect_anomaly(s[4]); torch.use_deterministic_algorithms(s[5]); torch.set_num_threads(s[6])
    torch.set_float32_matmul_precision(s[7]); torch.backends.mkldnn.enabled = s[8]
    torch.random.set_rng_state(s[9]); random.setstate(s[10])
    os.environ.clear(); os.environ.update(s[11]); os.chdir(s[12]); sys.path[:] = s[13]
    for name in set(sys.modules) - s[14]:
        del sys.modules[name]
    warnings.filters[:] = s[15]; logging.getLogger().setLevel(s[16]); logging.getLogger().handlers[:] = s[17]
    for sig, handler in s[18].items():
        signal.signal(sig, handler)

for line in sys.stdin:
    path, backend = line.split()
    t0 = time.perf_counter()
    torch._dynamo.reset()
    ns = {"__file__": path, "__name__": "snip"}
    exec(compile(open(path).read(), path, "exec"), ns)
    compiled = torch.compile(ns.get("model") or ns["fn"], backend=backend)
    for call in ns["inputs"]():
        compiled(*(call if isinstance(call, tuple) else (call,)))
    t1 = time.perf_counter()
    restore(snapshot())
    t2 = time.perf_counter()
    print(t1 - t0, t2 - t1, flush=True)
"""


#: glibc's malloc in the floor process set as the worker sets it in a run's child
#: (playground/worker/process/memory.py): freed memory kept. A warm tool could do this too, so the
#: floor is printed both ways.
TUNED_MALLOC = {
    "MALLOC_TRIM_THRESHOLD_": str(2**31 - 1),
    "MALLOC_MMAP_THRESHOLD_": str(1 << 30),
    "MALLOC_TOP_PAD_": str(64 << 20),
}


class Floor:
    def __init__(self, env: dict[str, str] | None = None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", FLOOR],
            env=dict(os.environ, **(env or {})),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )

    def run(self, path: Path, backend: str) -> tuple[float, float]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{path} {backend}\n")
        self.proc.stdin.flush()
        run_s, snapshot_s = self.proc.stdout.readline().split()
        return float(run_s), float(snapshot_s)

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(10)


class WarmRoute:
    def __init__(
        self, path: Path, isolation: str = "fork", waterfall: bool = False, env: dict[str, str] | None = None
    ) -> None:
        self.path = path
        env = dict(os.environ, COMPILE_PLAYGROUND_ISOLATION=isolation, **(env or {}))
        # The waterfall rides on the timings: on, briefly, after the diagnostics line.
        timing = ["--min-run-time", "0.01"] if waterfall else ["--no-timing"]
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "playground", "watch", str(path), "--json-lines", *timing],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        self.lines: list[tuple[float, dict]] = []
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            with self.cond:
                self.lines.append((time.monotonic(), json.loads(line)))
                self.cond.notify_all()

    def wait_for(self, sha: str, stage: str, timeout: float = 120) -> tuple[float, dict]:
        end = time.monotonic() + timeout
        with self.cond:
            while True:
                for t, obj in self.lines:
                    if obj.get("content_sha256") == sha and obj.get("stage") == stage:
                        return t, obj
                left = end - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no {stage} line for {sha[:8]}")
                self.cond.wait(left)

    def save(self, text: str) -> tuple[float, float, dict, dict]:
        """Save atomically (as editors do); return (save->diagnostics s, worker torch time s, the
        diagnostics line, the save's waterfall in ms or {})."""
        import hashlib

        sha = hashlib.sha256(text.encode()).hexdigest()
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(text)
        start = time.monotonic()
        os.replace(tmp, self.path)
        t, diag = self.wait_for(sha, "diagnostics")
        _, complete = self.wait_for(sha, "complete")
        phases = diag.get("phase_s") or {}
        return t - start, phases.get("load", 0.0) + phases.get("calls", 0.0), diag, waterfall_ms(complete, start, t)

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


#: The waterfall's columns in the order of a save: the client's part before the request, the
#: worker's phases (timings.save), the client's part after the diagnostics event.
WATERFALL = ("client", *(phase for phase in WATERFALL_PHASES if phase != "timing"))


def waterfall_ms(complete: dict, saved: float, line_at: float) -> dict[str, float]:
    """The save's waterfall in ms by phase: the worker's (the report's `timings.save`, from the
    client's send) and "client": the save to its diagnostics line less the worker's part (from
    the send to the diagnostics event sent), i.e. the file event to the send (the watcher's
    debounce, reading and hashing the file) plus the event's way to the line (pipe, parse, print);
    the two are not told apart."""
    save = (complete.get("timings") or {}).get("save") or {}
    phases = {p["name"]: p for p in save.get("phases") or ()}
    if save.get("origin") != "sent" or "diagnostics" not in phases:
        return {}
    out = {name: p["duration_ms"] for name, p in phases.items()}
    worker_ms = phases["diagnostics"]["start_ms"] + phases["diagnostics"]["duration_ms"]
    out["client"] = max((line_at - saved) * 1e3 - worker_ms, 0.0)
    return out


def measure(backend: str, saves: int, colds: int, variant: dict[str, str] | None = None) -> dict[str, float]:
    """Medians per route; `variant`, when given, adds the fork route again with that environment
    ("fork_off"), interleaved with the others."""
    import hashlib

    with tempfile.TemporaryDirectory() as tmp:
        names = ("fork", "none", "floor", *(("fork_off",) if variant else ()))
        paths = {name: Path(tmp) / name / "bench_snippet.py" for name in names}
        for path in paths.values():
            path.parent.mkdir()
            path.write_text(textwrap.dedent(SNIPPET.format(backend=backend, n=0)))
        routes = {name: WarmRoute(paths[name], name, waterfall=name == "fork") for name in ("fork", "none")}
        if variant:  # the fork route again, under the variant's environment
            routes["fork_off"] = WarmRoute(paths["fork_off"], "fork", waterfall=True, env=variant)
        floor, tuned = Floor(), Floor(TUNED_MALLOC)
        try:
            for name, route in routes.items():
                route.wait_for(hashlib.sha256(paths[name].read_bytes()).hexdigest(), "complete", timeout=300)
            floor.run(paths["floor"], backend)  # its first run pays torch's one-time start-up
            tuned.run(paths["floor"], backend)
            lat: dict[str, list[float]] = {"fork": [], "none": [], "floor": [], "tuned": [], "snapshot": [], "cold": []}
            lat["fork_off"] = []
            overhead: list[float] = []
            waterfalls: list[dict[str, float]] = []
            waterfalls_off: list[dict[str, float]] = []
            # Interleave the routes so that machine noise hits them alike.
            for i in range(max(saves, colds)):
                text = textwrap.dedent(SNIPPET.format(backend=backend, n=i + 1))
                if i < saves:
                    for name, route in routes.items():
                        latency, in_torch, diag, waterfall = route.save(text)
                        lat[name].append(latency)
                        if name == "fork":
                            overhead.append(latency - in_torch)
                            if waterfall:
                                waterfalls.append(waterfall)
                        elif name == "fork_off" and waterfall:
                            waterfalls_off.append(waterfall)
                    paths["floor"].write_text(text)
                    run_s, snapshot_s = floor.run(paths["floor"], backend)
                    lat["floor"].append(run_s)
                    lat["snapshot"].append(snapshot_s)
                    lat["tuned"].append(tuned.run(paths["floor"], backend)[0])
                if i < colds:
                    lat["cold"].append(cold_route(paths["floor"], backend))
        finally:
            for route in routes.values():
                route.close()
            floor.close()
            tuned.close()
    med = {name: statistics.median(values) for name, values in lat.items() if values}
    return {
        "fork_off_s": med.get("fork_off"),
        "waterfall_off": {k: statistics.median(w.get(k, 0.0) for w in waterfalls_off) for k in WATERFALL}
        if waterfalls_off
        else {},
        "fork_s": med["fork"],
        "none_s": med["none"],
        "snapshot_s": med["none"] + med["snapshot"],
        "floor_s": med["floor"],
        "tuned_s": med["tuned"],
        "cold_s": med["cold"],
        "overhead_ms": statistics.median(overhead) * 1e3,
        "graphs": diag["graph_count"],
        "breaks": diag["graph_break_count"],
        "waterfall": {k: statistics.median(w.get(k, 0.0) for w in waterfalls) for k in WATERFALL if waterfalls},
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--saves", type=int, default=5)
    p.add_argument("--cold", type=int, default=3)
    p.add_argument("--backends", default="eager,inductor")
    p.add_argument(
        "--trace-warmup-route",
        action="store_true",
        help="and the fork route with the template's trace warm-up off (--variant COMPILE_PLAYGROUND_TRACE_WARMUP=0)",
    )
    p.add_argument(
        "--variant",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="and the fork route again with this variable set (repeat for several; e.g. COMPILE_PLAYGROUND_PREFAULT_MIB=0)",
    )
    p.add_argument(
        "--json", metavar="FILE", help="also write the medians to FILE as JSON (benchmarks/speed.py reads it)"
    )
    args = p.parse_args()
    variant = dict(v.split("=", 1) for v in args.variant if "=" in v)
    if args.trace_warmup_route:
        variant["COMPILE_PLAYGROUND_TRACE_WARMUP"] = "0"
    bad = [v for v in args.variant if "=" not in v or not v.split("=", 1)[0]]
    if bad:
        p.error(f"--variant takes NAME=VALUE, not {bad[0]!r}")
    load = os.getloadavg()
    load_start = load
    print(f"load average at the start: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print("save -> diagnostics, medians; ratios of the fork design (the warm route) to the others")
    print("floor*: the floor with glibc's malloc keeping freed memory, as a run's child does")
    print(
        f"{'backend':<9} {'fork':>7} {'in-proc':>8} {'snap/rst':>9} {'floor':>7} {'floor*':>7} {'cold':>7} "
        f"{'fork/in-proc':>12} {'fork/floor':>10} {'fork/floor*':>11} {'cold/fork':>9}  overhead  graphs/breaks"
    )
    results = []
    for backend in args.backends.split(","):
        r = measure(backend, args.saves, args.cold, variant)
        results.append((backend, r))
        print(
            f"{backend:<9} {r['fork_s'] * 1e3:>5.0f}ms {r['none_s'] * 1e3:>6.0f}ms {r['snapshot_s'] * 1e3:>7.0f}ms "
            f"{r['floor_s'] * 1e3:>5.0f}ms {r['tuned_s'] * 1e3:>5.0f}ms {r['cold_s']:>6.2f}s "
            f"{r['fork_s'] / r['none_s']:>11.2f}x {r['fork_s'] / r['floor_s']:>9.2f}x {r['fork_s'] / r['tuned_s']:>10.2f}x "
            f"{r['cold_s'] / r['fork_s']:>8.1f}x "
            f"{r['overhead_ms']:>6.0f}ms  {r['graphs']}/{r['breaks']}",
            flush=True,
        )
    words = " ".join(f"{k}={v}" for k, v in variant.items())
    if variant:
        print(f"the fork route with {words}:")
        for backend, r in results:
            off = r["fork_off_s"]
            print(
                f"{backend:<9} {off * 1e3:>5.0f}ms  fork/floor {off / r['floor_s']:.2f}x "
                f"(with it: {r['fork_s'] * 1e3:.0f}ms, {r['fork_s'] / r['floor_s']:.2f}x)"
            )
    load = os.getloadavg()
    print(f"load average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if args.json:
        summary = {"load_start": load_start, "load_end": load, "backends": dict(results)}
        Path(args.json).write_text(json.dumps(summary))
    print_waterfalls(results)
    if variant:
        print_waterfalls([(f"{b}, variant", {"waterfall": r["waterfall_off"]}) for b, r in results])


def print_waterfalls(results: list[tuple[str, dict]]) -> None:
    """The fork route's save waterfall, median ms per phase over the saves ("trace" and
    "backend" lie inside "calls")."""
    print("\nthe fork route's save waterfall: median ms per phase (trace and backend are inside calls)")
    width = max([9, *(len(label) + 1 for label, _ in results)])
    print(f"{'backend':<{width}} " + " ".join(f"{k:>{max(len(k), 6)}}" for k in WATERFALL))
    for backend, r in results:
        w = r["waterfall"]
        if not w:
            print(f"{backend:<{width}} (no waterfall: the worker sent none)")
            continue
        print(f"{backend:<{width}} " + " ".join(f"{w.get(k, 0.0):>{max(len(k), 6)}.1f}" for k in WATERFALL))


if __name__ == "__main__":
    main()
