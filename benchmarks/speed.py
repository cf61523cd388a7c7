"""Every speed goal in one run: each benchmark below measured side by side with its own floor,
then one table of the ratios against their goals, with the machine's load beside each.

- first findings under Inductor on a graph-changing edit, against Dynamo's own trace of the same
  code in a warm process, and the complete report with the findings lane against without it
  (findings_latency.py);
- a toy's save to diagnostics against torch's own floor, eager and Inductor (latency.py);
- one person's session in PSS: the app, the worker's template and its spare child, with the
  defaults and with a room host's limits (workshop.py, its attendee);
- `q` in every phase through a real pseudo-terminal (quit.py);
- with `--ci`, `.ci/run` on a clean clone of this checkout's HEAD, timed (about three quarters
  of an hour here: off by default).

Each benchmark prints its own lines as it goes (the figures behind each ratio) and writes its
medians for this script to read. The machine is shared and noisy: compare figures of one run,
and read the load beside them.

    python benchmarks/speed.py [--quick] [--ci] [--only findings,toys,memory,quit]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PARTS = ("findings", "toys", "memory", "quit")


def _load() -> str:
    return _fmt(os.getloadavg())


def _bench(script: str, out: Path, *args: str) -> dict | None:
    """Run benchmarks/`script` with `args` and `--json out`; its medians, or None if it failed."""
    print(f"\n=== {script} {' '.join(args)}", flush=True)
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), *args, "--json", str(out)], cwd=ROOT)
    if done.returncode != 0 or not out.exists():
        print(f"{script} failed (exit {done.returncode})", flush=True)
        return None
    return json.loads(out.read_text())


def _row(goal: str, measured: str, target: str, met: bool | None, load: str) -> tuple[str, str, str, str, str]:
    return (goal, measured, target, "-" if met is None else "yes" if met else "no", load)


def findings(folder: Path, quick: bool) -> list[tuple[str, str, str, str, str]]:
    r = _bench("findings_latency.py", folder / "findings.json", "--saves", "3" if quick else "5")
    if r is None:
        return [_row("first findings / Dynamo's own trace", "failed", "<= 1.5x", False, "")]
    load = f"{r['load_before']} -> {r['load_after']}"
    own = statistics.median(float(x["dynamo"]) for x in r["rows"])
    first = [float(x["findings"]) for x in r["rows"] if x["findings"] is not None]
    done = statistics.median(float(x["complete"]) for x in r["rows"])
    plain = statistics.median(float(x["no_lane"]) for x in r["rows"])
    equal = all(x["equal"] for x in r["rows"])
    rows = []
    if first:
        ratio = statistics.median(first) / own
        measured = f"{ratio:.2f}x ({statistics.median(first):.2f} / {own:.2f} s)"
        rows.append(_row("first findings / Dynamo's own trace", measured, "<= 1.5x", ratio <= 1.5, load))
    else:
        rows.append(_row("first findings / Dynamo's own trace", "no findings lane", "<= 1.5x", False, load))
    rows.append(
        _row("findings equal the complete report", "every save" if equal else "NOT on every save", "all", equal, load)
    )
    ratio = done / plain
    rows.append(
        _row(
            "complete report, lane / no lane",
            f"{ratio:.2f}x ({done:.2f} / {plain:.2f} s)",
            "<= 1.1x",
            ratio <= 1.1,
            load,
        )
    )
    return rows


def toys(folder: Path, quick: bool) -> list[tuple[str, str, str, str, str]]:
    r = _bench("latency.py", folder / "toys.json", "--saves", "5" if quick else "9", "--cold", "1")
    if r is None:
        return [_row("toy save -> diagnostics / floor", "failed", "<= 1.1x", False, "")]
    load = f"{_fmt(r['load_start'])} -> {_fmt(r['load_end'])}"
    rows = []
    for backend, m in r["backends"].items():
        ratio = m["fork_s"] / m["floor_s"]
        measured = f"{ratio:.2f}x ({m['fork_s'] * 1e3:.0f} / {m['floor_s'] * 1e3:.0f} ms)"
        rows.append(_row(f"toy save -> diagnostics / floor, {backend}", measured, "<= 1.1x", ratio <= 1.1, load))
    return rows


def memory(folder: Path, quick: bool) -> list[tuple[str, str, str, str, str]]:
    del quick  # one idle session each way: the figure does not get steadier with more
    r = _bench("workshop.py", folder / "memory.json", "--followers", "")
    if r is None:
        return [_row("one session's PSS (app + template + spare)", "failed", "<= 300 MiB", False, "")]
    load = f"{_fmt(r['load_start'])} -> {_fmt(r['load_end'])}"
    rows = []
    for label, got in r["attendee"].items():
        sizes = got["sizes"]
        parts = ", ".join(f"{k.split(' (')[0]} {v:.0f}" for k, v in sizes.items() if k != "total")
        total = sizes["total"]
        goal = "<= 300 MiB" if label == "defaults" else "(floor)"
        met = total <= 300 if label == "defaults" else None
        rows.append(_row(f"one session's PSS, {label}", f"{total:.1f} MiB ({parts})", goal, met, load))
    return rows


def quit_(folder: Path, quick: bool) -> list[tuple[str, str, str, str, str]]:
    r = _bench("quit.py", folder / "quit.json", "--rounds", "1" if quick else "2")
    if r is None:
        return [_row("q in every phase, exited", "failed", "<= 0.5 s", False, "")]
    load = f"{_fmt(r['load_start'])} -> {_fmt(r['load_end'])}"
    slowest = max(r["phases"].items(), key=lambda kv: kv[1]["exited_s"])
    left = sum(p["left"] for p in r["phases"].values())
    worst = slowest[1]["exited_s"]
    measured = f"slowest {worst * 1e3:.0f} ms ({slowest[0]}); idle {r['idle_s'] * 1e3:.0f} ms"
    return [
        _row("q in every phase, key to exit", measured, "<= 0.5 s", worst <= 0.5, load),
        _row("q in every phase, processes left", str(left), "0", left == 0, load),
    ]


def ci() -> list[tuple[str, str, str, str, str]]:
    """`.ci/run` on a clean clone of HEAD, as CI runs it; the clone (its venvs: several GB) is
    removed after."""
    folder = Path(tempfile.mkdtemp(prefix="speed-ci-"))
    clone = folder / "clone"
    load = _load()
    try:
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
        print(f"\n=== .ci/run on a clean clone ({clone}); its log: {folder / 'ci.log'}", flush=True)
        started = time.monotonic()
        with open(folder / "ci.log", "w") as log:
            code = subprocess.run(
                ["bash", ".ci/run"], cwd=clone, env={**os.environ, "CI": "true"}, stdout=log, stderr=subprocess.STDOUT
            ).returncode
        minutes = (time.monotonic() - started) / 60
    finally:
        shutil.rmtree(clone, ignore_errors=True)
    measured = f"{minutes:.1f} min" + ("" if code == 0 else f" (FAILED, exit {code})")
    return [_row("CI on a clean clone", measured, "<= 20 min", minutes <= 20 and code == 0, f"{load} -> {_load()}")]


def _fmt(load: list[float] | tuple[float, ...]) -> str:
    return " ".join(f"{x:.2f}" for x in load)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="fewer saves and rounds (a rough figure in about 8 min)")
    p.add_argument("--ci", action="store_true", help="also time .ci/run on a clean clone (about 45 min here)")
    p.add_argument("--only", default=",".join(PARTS), help=f"comma-separated parts: {','.join(PARTS)}")
    args = p.parse_args()
    wanted = [part.strip() for part in args.only.split(",") if part.strip()]
    unknown = sorted(set(wanted) - set(PARTS))
    if unknown:
        p.error(f"unknown parts: {unknown}; known: {list(PARTS)}")
    print(f"load average at the start: {_load()}  cpus: {len(os.sched_getaffinity(0))}", flush=True)
    parts = {"findings": findings, "toys": toys, "memory": memory, "quit": quit_}
    rows: list[tuple[str, str, str, str, str]] = []
    with tempfile.TemporaryDirectory(prefix="speed-") as tmp:
        for name in PARTS:
            if name in wanted:
                rows.extend(parts[name](Path(tmp), args.quick))
    if args.ci:
        rows.extend(ci())
    else:
        rows.append(_row("CI on a clean clone", "not run (--ci)", "<= 20 min", None, ""))
    header = ("goal", "measured", "target", "met", "load average (start -> end)")
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    print("\n" + "  ".join(h.ljust(w) for h, w in zip(header, widths)))
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
