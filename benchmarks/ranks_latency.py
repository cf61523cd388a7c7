"""A save across ranks against a one-process save, and what each extra rank costs in memory.

One warm `compile-playground watch --json-lines` on a toy whose SETTINGS alternate between
`"ranks": 1` and `"ranks": 2` (and 4 with --ranks 4), saved atomically as an editor saves, in
one interleaved run (the machine is shared and noisy): per save, the time to the diagnostics
line (rank 0's early findings) and to the complete line (every rank's report merged), and
while it runs the summed proportional set size (PSS: shared pages split between the processes
sharing them, so forks of one template are not counted twice) of every process below the
CLI: the template and its forks. The ratios are printed side by side; the memory per extra
rank is the difference of the peaks divided by the extra ranks.

    python benchmarks/ranks_latency.py [--saves 5] [--ranks 2] [--backend eager]
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from latency import WarmRoute  # noqa: E402 - the benchmarks folder is not a package

from playground.worker.process import procs  # noqa: E402

SNIPPET = """
import torch
import torch.distributed as dist

SETTINGS = {{"backend": "{backend}", "ranks": {ranks}}}

def fn(x):
    y = torch.nn.functional.gelu(x) * 2  # edit {n}
    return y.cos() + 1

def inputs():
    torch.manual_seed(dist.get_rank() if dist.is_initialized() else 0)
    return [torch.randn(32, 32), torch.randn(48, 32)]
"""


def _pss_mib(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


class Peak:
    """The highest summed PSS of the processes below `root` (the template and its forks) while on."""

    def __init__(self, root: int) -> None:
        self.root, self.peak, self.on = root, 0.0, False
        threading.Thread(target=self._sample, daemon=True).start()

    def start(self) -> None:
        self.peak, self.on = 0.0, True

    def stop(self) -> float:
        self.on = False
        return self.peak

    def _sample(self) -> None:
        while True:
            if self.on:
                below = procs.descendants(self.root)
                self.peak = max(self.peak, sum(_pss_mib(p) for p in below))
            time.sleep(0.02)


def _settle(root: int, idle: int, timeout: float = 10.0) -> None:
    """Until the last save's processes are gone (the complete line comes before they exit), so
    one save's peak never holds the last one's ranks."""
    end = time.monotonic() + timeout
    while len(procs.descendants(root)) > idle and time.monotonic() < end:
        time.sleep(0.02)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--saves", type=int, default=5)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--backend", default="eager")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="ranks-bench-"))
    path = folder / "snippet.py"
    path.write_text(SNIPPET.format(backend=args.backend, ranks=1, n=0))
    route = WarmRoute(path)
    try:
        route.wait_for(hashlib.sha256(path.read_bytes()).hexdigest(), "complete", timeout=300)
        peak = Peak(route.proc.pid)
        time.sleep(1.0)  # the spare forked after the first run
        idle = len(procs.descendants(route.proc.pid))
        results: dict[int, dict[str, list[float]]] = {
            n: {"diag": [], "complete": [], "pss": []} for n in (1, args.ranks)
        }
        edit = 0
        for _ in range(args.saves):
            for ranks in (1, args.ranks):
                edit += 1
                text = SNIPPET.format(backend=args.backend, ranks=ranks, n=edit)
                _settle(route.proc.pid, idle)
                peak.start()
                start = time.monotonic()
                diag_s, _, _, _ = route.save(text)
                done_at, _ = route.wait_for(hashlib.sha256(text.encode()).hexdigest(), "complete")
                results[ranks]["diag"].append(diag_s)
                results[ranks]["complete"].append(done_at - start)
                results[ranks]["pss"].append(peak.stop())
    finally:
        route.close()
        for p in folder.iterdir():
            p.unlink()
        folder.rmdir()
    for n, r in results.items():
        print(
            f"ranks {n}: complete per save {[round(x, 3) for x in r['complete']]} s, peak PSS {[round(x) for x in r['pss']]} MiB"
        )
    med = {n: {k: statistics.median(v) for k, v in r.items()} for n, r in results.items()}
    one, many = med[1], med[args.ranks]
    print(f"backend {args.backend}, {args.saves} saves each, interleaved; medians")
    print(f"{'':12}{'diagnostics':>14}{'complete':>12}{'peak PSS':>12}")
    for n in (1, args.ranks):
        print(f"ranks {n:<6}{med[n]['diag']:>12.3f} s{med[n]['complete']:>10.3f} s{med[n]['pss']:>8.0f} MiB")
    print(
        f"ratio {args.ranks}/1   diagnostics {many['diag'] / one['diag']:.2f}x   "
        f"complete {many['complete'] / one['complete']:.2f}x"
    )
    extra = (many["pss"] - one["pss"]) / (args.ranks - 1)
    print(f"memory per extra rank: {extra:.0f} MiB (PSS of its run and its references, summed)")


if __name__ == "__main__":
    main()
