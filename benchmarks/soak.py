"""Soak: 300 consecutive runs in one session, to show the worker does not grow without bound.

Runs alternate between gallery snippets, backends eager and aot_eager, plus 20 Inductor runs
spread through the session. Prints the worker's RSS at start, peak and end, the per-run latency
trend (median of each block of 50 runs), and every recycle (the client replaces the worker past
its RSS ceiling, COMPILE_PLAYGROUND_RSS_LIMIT_MB, default 3072 MiB, and says so).

    python benchmarks/soak.py [--runs 300] [--inductor 20] [--rss-limit-mb 3072]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playground.settings import Settings  # noqa: E402
from playground.sync import SyncWorker  # noqa: E402

SNIPPETS = [
    "pure_function.py",
    "default.py",
    "shapes_auto.py",
    "lr_float_static.py",
    "mlp_module.py",
    "dropout.py",
    "helper_break.py",
    "item_break.py",
]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=300)
    p.add_argument("--inductor", type=int, default=20)
    p.add_argument("--rss-limit-mb", type=float, default=None)
    args = p.parse_args()
    kwargs = {} if args.rss_limit_mb is None else {"rss_limit_mb": args.rss_limit_mb}
    inductor_every = max(args.runs // max(args.inductor, 1), 1) if args.inductor else 0
    latencies: list[float] = []
    rss: list[float] = []
    recycles: list[str] = []
    errors = 0
    with SyncWorker(**kwargs) as worker:
        hello = worker.start()
        start_rss = hello.get("rss_mb", 0.0)
        print(f"worker up: torch {hello['torch_version']}, RSS {start_rss:.0f} MiB", flush=True)
        inductor_done = 0
        for i in range(args.runs):
            snippet = ROOT / "snippets" / SNIPPETS[i % len(SNIPPETS)]
            if inductor_every and i % inductor_every == inductor_every - 1 and inductor_done < args.inductor:
                backend = "inductor"
                inductor_done += 1
            else:
                backend = ("eager", "aot_eager")[i % 2]
            settings = Settings.from_dict({"backend": backend})
            t0 = time.perf_counter()
            report = worker.run(str(snippet), settings, timing=False)
            latencies.append(time.perf_counter() - t0)
            if report.get("error") and report["error"]["kind"] != "compile":
                errors += 1
            mb = (report.get("worker") or {}).get("rss_mb")
            if mb:
                rss.append(mb)
            for note in report.get("notes") or []:
                if note.startswith("recycled"):
                    recycles.append(f"run {i + 1}: {note}")
            if (i + 1) % 50 == 0:
                block = latencies[-50:]
                print(
                    f"runs {i - 48:>3}-{i + 1:<3} median {statistics.median(block) * 1e3:6.0f} ms  "
                    f"p90 {sorted(block)[int(len(block) * 0.9)] * 1e3:6.0f} ms  RSS now {rss[-1]:.0f} MiB",
                    flush=True,
                )
    print(f"runs {len(latencies)} ({inductor_done} inductor), errors other than compile findings: {errors}")
    print(f"worker RSS MiB: start {start_rss:.0f}  peak {max(rss):.0f}  end {rss[-1]:.0f}")
    print(f"recycles: {len(recycles)}")
    for line in recycles:
        print("  " + line)


if __name__ == "__main__":
    main()
