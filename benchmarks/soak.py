"""Soak: 300 consecutive runs in one session, to show the worker does not grow without bound.

Runs alternate between gallery snippets, backends eager and aot_eager, plus 20 Inductor runs
spread through the session. Prints the template's RSS at start and end (each run is a forked
child that exits, so the template should not grow), each run's child RSS (peak and end), the
per-run latency trend (median of each block of 50 runs), and any worker restart.

    python benchmarks/soak.py [--runs 300] [--inductor 20]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playground.engine.run_request import RunFlags, RunRequest  # noqa: E402
from playground.engine.settings import Settings  # noqa: E402
from playground.engine.snippet import prepared_as_given  # noqa: E402
from playground.engine.sync import SyncWorker  # noqa: E402

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
    args = p.parse_args()
    inductor_every = max(args.runs // max(args.inductor, 1), 1) if args.inductor else 0
    latencies: list[float] = []
    rss: list[float] = []
    restarts: list[str] = []
    errors = 0
    with SyncWorker() as worker:
        hello = worker.start()
        start_rss = hello.rss_mb
        print(f"worker up: torch {hello.torch_version}, RSS {start_rss:.0f} MiB", flush=True)
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
            report = worker.run(RunRequest(prepared_as_given(snippet, settings), RunFlags(timing=False))).report
            latencies.append(time.perf_counter() - t0)
            if report.error is not None and report.error.kind != "compile":
                errors += 1
            mb = report.worker.rss_mb if report.worker is not None else None
            if mb:
                rss.append(mb)
            if report.worker_restarted:
                restarts.append(f"run {i + 1}: {report.worker_restart_reason}")
            if (i + 1) % 50 == 0:
                block = latencies[-50:]
                print(
                    f"runs {i - 48:>3}-{i + 1:<3} median {statistics.median(block) * 1e3:6.0f} ms  "
                    f"p90 {sorted(block)[int(len(block) * 0.9)] * 1e3:6.0f} ms  run's RSS {rss[-1]:.0f} MiB",
                    flush=True,
                )
        end_rss = _rss_of(worker.client.hello.pid if worker.client.hello else None)
    print(f"runs {len(latencies)} ({inductor_done} inductor), errors other than compile findings: {errors}")
    print(f"template RSS MiB: start {start_rss:.0f}  end {end_rss:.0f}")
    print(f"each run's child RSS MiB at its end: median {statistics.median(rss):.0f}  peak {max(rss):.0f}")
    print(f"worker restarts: {len(restarts)}")
    for line in restarts:
        print("  " + line)


def _rss_of(pid: int | None) -> float:
    try:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * 4096 / 2**20
    except (OSError, ValueError, TypeError):
        return float("nan")


if __name__ == "__main__":
    main()
