"""A program under the playground against the same program run by `python PROG`, side by side
in one run: the wall time of each, their ratio, and the cost per call of a compiled callable.

For each program (tests/programs/guard_heavy.py, a loop of many calls of one small compiled
function written here, and any PROG given), alternately, `--rounds` times:

- python: `python PROG` in a fresh process, its wall time (python's start and torch's import
  included, as a user times it);
- playground: `compile-playground check PROG --json --no-timing`, its wall time, and the
  report's own `phase_s`: `program` (the program's run under the playground's patch, in the
  run's fork: no start, torch already imported) and `reference` (its eager reference run and
  the comparison, which a plain python run has no counterpart for).

The overhead that matters is the program's run against python's (`program / python`): the
bound (≤ 1.2x) is on that. The whole `check` is shown beside it. The load average is printed
with every row: the machine may be shared, so only ratios from the same run mean anything.

The per-call cost is from the calls loop, which times its own loop of calls (after the first,
which compiles) in both runs: the difference over the number of calls.

    python benchmarks/program_overhead.py [--rounds 2] [--calls 20000] [PROG ...]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CALLS_LOOP = """\
import sys
import time
import torch

@torch.compile(backend="eager")
def step(x):
    return x + 1

x = step(torch.zeros(4))
started = time.perf_counter()
for _ in range(int(sys.argv[1])):
    x = step(x)
print(f"loop_s={time.perf_counter() - started:.6f}")
"""


def _loop_s(text: str) -> float | None:
    for line in text.splitlines():
        if line.startswith("loop_s="):
            return float(line.split("=", 1)[1])
    return None


def _wall(cmd: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=1800)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return wall, done.stdout


def _playground(path: str, args: list[str]) -> tuple[float, dict[str, float], int, str]:
    cmd = [sys.executable, "-m", "playground", "check", path, "--json", "--no-timing"]
    wall, out = _wall(cmd + (["--", *args] if args else []))
    report = json.loads(out)
    if report.get("stopped"):
        print(f"  note: the playground stopped {path} ({report['stopped']}): its times are not comparable")
    text = (report.get("output") or {}).get("text", "")
    return wall, dict(report.get("phase_s") or {}), int(report.get("calls") or 0), text


def _load() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--calls", type=int, default=20000, help="calls of the calls loop")
    parser.add_argument("programs", nargs="*", help="more programs (their arguments after a ::, e.g. train.py::--x=1)")
    opts = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        loop = Path(tmp) / "calls_loop.py"
        loop.write_text(CALLS_LOOP)
        runs: list[tuple[str, list[str]]] = [
            (str(ROOT / "tests" / "programs" / "guard_heavy.py"), []),
            (str(loop), [str(opts.calls)]),
        ]
        for spec in opts.programs:
            path, _, rest = spec.partition("::")
            runs.append((os.path.abspath(path), rest.split() if rest else []))
        print(f"torch: {sys.executable}; rounds {opts.rounds}; cores {os.cpu_count()}")
        header = f"{'program':<24} {'python s':>9} {'program s':>9} {'ratio':>6} {'check s':>8} {'ratio':>6} {'calls':>7}  load"
        print(header)
        for path, args in runs:
            plain, program, whole, calls = [], [], [], 0
            loops: tuple[list[float], list[float]] = ([], [])
            for _ in range(opts.rounds):
                wall, out = _wall([sys.executable, path, *args])
                plain.append(wall)
                wall, phases, calls, text = _playground(path, args)
                whole.append(wall)
                program.append(phases.get("program", float("nan")))
                for side, said in zip(loops, (out, text), strict=True):
                    if (loop_s := _loop_s(said)) is not None:
                        side.append(loop_s)
            p, g, w = statistics.median(plain), statistics.median(program), statistics.median(whole)
            print(f"{Path(path).name:<24} {p:9.2f} {g:9.2f} {g / p:6.2f} {w:8.2f} {w / p:6.2f} {calls:7d}  {_load()}")
            if loops[0] and loops[1]:
                a, b = statistics.median(loops[0]), statistics.median(loops[1])
                n = max(calls - 1, 1)
                print(
                    f"  calls loop: python {a / n * 1e6:.1f} us/call, playground {b / n * 1e6:.1f} us/call: "
                    f"{(b - a) / n * 1e6:+.1f} us per call ({b / a:.2f}x), the loop timed by the program itself"
                )


if __name__ == "__main__":
    main(sys.argv[1:])
