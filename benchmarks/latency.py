"""Save-to-diagnostics latency: the warm `watch` worker against the route people take today.

Today's route: a fresh `python` that imports torch, compiles the snippet's target with
TORCH_LOGS=graph_breaks,recompiles,guards and runs its calls. Ours: `compile-playground watch
--json-lines`, already running, sees the save and prints the diagnostics line.

Both are measured side by side in one run (the machine is shared and noisy) and the ratio is
printed, for backends eager and inductor. Also printed: the warm route's own overhead, i.e.
save-to-line minus the time the worker spent inside torch (loading, compiling, running calls).

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


class WarmRoute:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "playground", "watch", str(path), "--json-lines", "--no-timing"],
            cwd=ROOT,
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
                self.lines.append((time.perf_counter(), json.loads(line)))
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

    def save(self, text: str) -> tuple[float, float, dict]:
        """Save atomically (as editors do); return (save->diagnostics s, worker torch time s, line)."""
        import hashlib

        sha = hashlib.sha256(text.encode()).hexdigest()
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(text)
        start = time.perf_counter()
        os.replace(tmp, self.path)
        t, diag = self.wait_for(sha, "diagnostics")
        self.wait_for(sha, "complete")
        phases = diag.get("phase_s") or {}
        return t - start, phases.get("load", 0.0) + phases.get("calls", 0.0), diag

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def measure(backend: str, saves: int, colds: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench_snippet.py"
        path.write_text(textwrap.dedent(SNIPPET.format(backend=backend, n=0)))
        warm = WarmRoute(path)
        try:
            import hashlib

            warm.wait_for(hashlib.sha256(path.read_bytes()).hexdigest(), "complete", timeout=300)
            latencies, torch_times = [], []
            cold_times = []
            # Interleave the two routes so that machine noise hits both alike.
            for i in range(max(saves, colds)):
                if i < saves:
                    latency, in_torch, diag = warm.save(textwrap.dedent(SNIPPET.format(backend=backend, n=i + 1)))
                    latencies.append(latency)
                    torch_times.append(in_torch)
                if i < colds:
                    cold_times.append(cold_route(path, backend))
        finally:
            warm.close()
    warm_med = statistics.median(latencies)
    cold_med = statistics.median(cold_times)
    overhead = statistics.median(lat - tt for lat, tt in zip(latencies, torch_times))
    return {
        "warm_s": warm_med,
        "cold_s": cold_med,
        "ratio": cold_med / warm_med,
        "overhead_ms": overhead * 1e3,
        "graphs": diag["graph_count"],
        "breaks": diag["graph_break_count"],
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--saves", type=int, default=5)
    p.add_argument("--cold", type=int, default=3)
    p.add_argument("--backends", default="eager,inductor")
    args = p.parse_args()
    print(
        f"{'backend':<10} {'warm save->diag':>16} {'fresh python':>13} {'ratio':>7} {'our overhead':>13}  graphs/breaks"
    )
    for backend in args.backends.split(","):
        r = measure(backend, args.saves, args.cold)
        print(
            f"{backend:<10} {r['warm_s'] * 1e3:>13.0f} ms {r['cold_s']:>11.2f} s {r['ratio']:>6.1f}x "
            f"{r['overhead_ms']:>10.0f} ms  {r['graphs']}/{r['breaks']}",
            flush=True,
        )


if __name__ == "__main__":
    main()
