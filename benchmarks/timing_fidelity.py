"""Timing fidelity: the playground's speedup against an independent torch.utils.benchmark run of
the same calls, side by side in one run, on the same machine, a case at a time.

For each case, in turn:
  - ours: `check --json` on the snippet (the warm worker's interleaved blocks, playground/worker/run/timing/steady_state.py), its
    speedup, the spread of the ratio and whether it called itself unreliable;
  - torch's: a fresh `python` that loads the same snippet, compiles its target with the same
    backend, makes the calls of inputs() once (compiles included), then times eager and compiled
    on the last call with torch.utils.benchmark.Timer.blocked_autorange (min_run_time 1 s each).
The agreement is ours / torch's; on a quiet machine it should sit within 0.8-1.2. Each case runs
ROUNDS times, alternating which side goes first, so that drift on a shared machine shows as
spread rather than bias.

    python benchmarks/timing_fidelity.py [--rounds 3] [--cases matmul,pointwise,mlp]
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CASES = {
    # Inductor fuses the chain into one kernel: a real speedup.
    "pointwise": (
        "inductor",
        """
        import torch

        def fn(x):
            return torch.sigmoid(x) * torch.tanh(x) + torch.relu(x) * 0.5 - x.sin()

        def inputs():
            return [torch.randn(2048, 2048)]
        """,
    ),
    # The same ops under backend eager: the speedup should be ~1x (Dynamo's overhead only).
    "matmul": (
        "eager",
        """
        import torch

        def fn(x, w):
            return torch.relu(x @ w).sum(0)

        def inputs():
            return [(torch.randn(512, 512), torch.randn(512, 512))]
        """,
    ),
    "mlp": (
        "inductor",
        """
        import torch

        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.GELU(), torch.nn.Linear(512, 256))

        def inputs():
            return [torch.randn(64, 256)]
        """,
    ),
}

TORCH_SIDE = r"""
import json, runpy, sys
import torch
import torch.utils.benchmark as benchmark

ns = runpy.run_path(sys.argv[1])
target = ns["model"] if "model" in ns else ns["fn"]
compiled = torch.compile(target, backend=sys.argv[2])
calls = [c if isinstance(c, tuple) else (c,) for c in ns["inputs"]()]
for args in calls:
    compiled(*args)
args = calls[-1]
out = {}
for name, f in (("eager", target), ("compiled", compiled)):
    t = benchmark.Timer("f(*args)", globals={"f": f, "args": args}, num_threads=torch.get_num_threads())
    out[name] = t.blocked_autorange(min_run_time=1.0).median * 1e3
print(json.dumps(out))
"""


def ours(path: str, backend: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-m", "playground", "check", path, "--json", "--backend", backend, "--min-run-time", "0.5"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return report["timings"] or {}


def theirs(path: str, backend: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", TORCH_SIDE, path, backend], capture_output=True, text=True, timeout=600, check=True
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cases", default=",".join(CASES))
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="timing-fidelity-")
    print(f"{'case':<10} {'backend':<9} {'ours':>8} {'spread':>14} {'torch':>8} {'ours/torch':>11}  unreliable?")
    agreements: list[float] = []
    try:
        for name in args.cases.split(","):
            backend, source = CASES[name]
            path = os.path.join(folder, f"{name}.py")
            Path(path).write_text(textwrap.dedent(source), encoding="utf-8")
            for round_ in range(args.rounds):
                if round_ % 2 == 0:
                    t, u = ours(path, backend), theirs(path, backend)
                else:
                    u, t = theirs(path, backend), ours(path, backend)
                speedup = u["eager"] / u["compiled"]
                mine = t.get("speedup")
                spread = (
                    f"{t['speedup_low']:.2f}-{t['speedup_high']:.2f}x" if t.get("speedup_low") is not None else "n/a"
                )
                agree = mine / speedup if mine else float("nan")
                if mine and not t.get("unreliable"):
                    agreements.append(agree)
                print(
                    f"{name:<10} {backend:<9} {mine or float('nan'):>7.2f}x {spread:>14} {speedup:>7.2f}x "
                    f"{agree:>10.2f}x  {t.get('unreliable') or 'no'}",
                    flush=True,
                )
    finally:
        for file in Path(folder).glob("*"):
            file.unlink()
        os.rmdir(folder)
    if agreements:
        print(
            f"\nreliable rounds: {len(agreements)}; ours/torch median {statistics.median(agreements):.2f}, "
            f"range {min(agreements):.2f}-{max(agreements):.2f} (goal: within 0.8-1.2 on a quiet machine)"
        )
    else:
        print("\nno round called itself reliable: the machine was busy throughout")


if __name__ == "__main__":
    main()
