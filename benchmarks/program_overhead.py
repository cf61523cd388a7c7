"""A program under the playground against the same program run by `python PROG`, side by side
in one run: the wall time of each, their ratio, and the cost per call of a compiled callable.

For each program, alternately, `--rounds` times:

- python: `python PROG` in a fresh process, its wall time (python's start and torch's import
  included, as a user times it);
- check: `compile-playground check PROG --json --no-timing`, its wall time (the whole: the
  worker's start, the program's run under the playground's patch, its eager reference run as
  far as the compared calls reach, the comparison, the report), and the report's own `phase_s`:
  `program` (the program's run, in the run's fork: no start, torch already imported) and
  `reference` (the eager reference run and the comparison).

The programs: tests/programs/guard_heavy.py (thousands of calls of a function whose guards
check forty tensors), a training loop written here (a compiled model, backward and an optimizer
step, `--steps` times), a loop of `--calls` calls of one trivial compiled function written here
(the per-call cost), and any PROG given (run in its own folder, as `cd DIR && python PROG`).

The bound is on the whole: `check` against `python PROG` (≤ 1.2x on a real script). The
training loop and the calls loop time their own loops in both runs (`loop_s=` on stdout), so the
cost per call (per step) is printed for python and for the playground side by side: the
playground's patch is the difference. The load average is printed with every row: the machine
may be shared, so only ratios from the same run mean anything.

    python benchmarks/program_overhead.py [--rounds 2] [--calls 20000] [--steps 500] [PROG[::ARGS] ...]
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
from dataclasses import dataclass, field
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

TRAIN_LOOP = """\
import sys
import time
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 64), nn.GELU(), nn.Linear(64, 4))
compiled = torch.compile(model, backend="aot_eager")
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
data, labels = torch.randn(64, 32), torch.randint(0, 4, (64,))


def train_step():
    opt.zero_grad()
    loss = nn.functional.cross_entropy(compiled(data), labels)
    loss.backward()
    opt.step()
    return loss


train_step()
started = time.perf_counter()
for _ in range(int(sys.argv[1])):
    loss = train_step()
print(f"loop_s={time.perf_counter() - started:.6f}")
print(round(loss.item(), 4))
"""


@dataclass
class Program:
    """One program of the benchmark: its file, its arguments, the folder it runs in, and the
    unit its own timed loop counts (None: it times no loop of its own)."""

    label: str
    path: str
    args: list[str]
    cwd: Path = ROOT
    unit: str | None = None
    #: What each round measured: python's wall, check's wall, the program's and the reference's
    #: phases, and each side's own loop.
    python: list[float] = field(default_factory=list)
    check: list[float] = field(default_factory=list)
    program: list[float] = field(default_factory=list)
    reference: list[float] = field(default_factory=list)
    loops: tuple[list[float], list[float]] = field(default_factory=lambda: ([], []))
    calls: int = 0


def _loop_s(text: str) -> float | None:
    for line in text.splitlines():
        if line.startswith("loop_s="):
            return float(line.split("=", 1)[1])
    return None


def _wall(cmd: list[str], cwd: Path) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=1800)
    wall = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}): {done.stderr[-2000:]}")
    return wall, done.stdout


def _round(p: Program) -> None:
    wall, out = _wall([sys.executable, p.path, *p.args], p.cwd)
    p.python.append(wall)
    cmd = [sys.executable, "-m", "playground", "check", p.path, "--json", "--no-timing"]
    wall, said = _wall(cmd + (["--", *p.args] if p.args else []), p.cwd)
    report = json.loads(said)
    if report.get("stopped") or report.get("error"):
        print(f"  note: {p.label}: stopped {report.get('stopped')}, error {report.get('error')}: not comparable")
    phases = report.get("phase_s") or {}
    p.check.append(wall)
    p.program.append(phases.get("program", float("nan")))
    p.reference.append(phases.get("reference", float("nan")))
    p.calls = int(report.get("calls") or 0)
    text = (report.get("output") or {}).get("text", "")
    for side, printed in zip(p.loops, (out, text), strict=True):
        if (loop_s := _loop_s(printed)) is not None:
            side.append(loop_s)


def _load() -> str:
    return "/".join(f"{x:.2f}" for x in os.getloadavg())


def _row(p: Program) -> str:
    py, ch = statistics.median(p.python), statistics.median(p.check)
    pr, ref = statistics.median(p.program), statistics.median(p.reference)
    return f"{p.label:<22} {py:9.2f} {ch:8.2f} {ch / py:6.2f} {pr:9.2f} {ref:7.2f} {p.calls:7d}  {_load()}"


def _per_call(p: Program, count: int) -> str | None:
    if not (p.loops[0] and p.loops[1]) or p.unit is None:
        return None
    a, b = statistics.median(p.loops[0]) / count * 1e6, statistics.median(p.loops[1]) / count * 1e6
    return (
        f"  {p.label}: python {a:.1f} us/{p.unit}, playground {b:.1f} us/{p.unit} "
        f"({b - a:+.1f} us, {b / a:.2f}x), each side's own loop of {count}; load {_load()}"
    )


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--calls", type=int, default=20000, help="calls of the calls loop")
    parser.add_argument("--steps", type=int, default=500, help="steps of the training loop")
    parser.add_argument(
        "--only", default=None, help="only these of ours, by label, comma-separated (guard_heavy,train,calls; none)"
    )
    parser.add_argument("programs", nargs="*", help="more programs (their arguments after a ::, e.g. train.py::--x=1)")
    opts = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        calls, train = Path(tmp) / "calls_loop.py", Path(tmp) / "train_loop.py"
        calls.write_text(CALLS_LOOP)
        train.write_text(TRAIN_LOOP)
        runs = [
            Program("guard_heavy", str(ROOT / "tests" / "programs" / "guard_heavy.py"), []),
            Program("train", str(train), [str(opts.steps)], unit="step"),
            Program("calls", str(calls), [str(opts.calls)], unit="call"),
        ]
        if opts.only is not None:
            runs = [p for p in runs if p.label in opts.only.split(",")]
        for spec in opts.programs:
            path, _, rest = spec.partition("::")
            full = Path(path).resolve()
            runs.append(Program(full.name, str(full), rest.split() if rest else [], cwd=full.parent))
        print(f"python {sys.executable}; rounds {opts.rounds}; cores {os.cpu_count()}; load {_load()}")
        print(
            f"{'program':<22} {'python s':>9} {'check s':>8} {'ratio':>6} {'program s':>9} {'ref s':>7} {'calls':>7}  load"
        )
        counts = {"train": opts.steps, "calls": opts.calls}
        for p in runs:
            for _ in range(opts.rounds):
                _round(p)
            print(_row(p), flush=True)
            if (line := _per_call(p, counts.get(p.label, 0))) is not None:
                print(line, flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
