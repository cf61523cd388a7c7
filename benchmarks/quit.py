"""`q` in every phase of a run: the seconds from the key to the terminal given back and to the
app's exit, through a real pseudo-terminal and the real app, side by side with `q` when idle in
the same run (the machine is shared and noisy: the ratio to idle is the figure to read).

The phases and the way each is reached are tests/tui/test_tui_quit_phases.py's: torch starting,
Inductor starting, Dynamo's long trace, Inductor building C++, the snippet's own code running,
the timing loop, two ranks compiling, a bisection's steps. Each phase is tried `--rounds` times,
the phases interleaved with an idle quit each round; medians are printed, with the load average.

    python benchmarks/quit.py [--rounds 3] [--phases "an Inductor compile,the timing"]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.tui.test_tui_quit_phases import PHASES, SIMPLE, _cleanup, _launch, _press_q, _read, reach  # noqa: E402


def idle_quit(tmp: Path) -> float:
    app, master, pids_file = _launch(tmp, SIMPLE, "eager")
    try:
        assert b"done in" in _read(master, 180, until=b"done in")
        return _press_q(app, master, pids_file)[1]
    finally:
        _cleanup(app, master, pids_file)


def phase_quit(tmp: Path, phase: str, snippet: str, backend: str, shown: bytes, extra: tuple[str, ...]):
    """(terminal back s, exited s, processes left) for q during `phase`."""
    app, master, pids_file = _launch(tmp, snippet, backend, *extra)
    try:
        reach(phase, shown, app, master, pids_file)
        return _press_q(app, master, pids_file)
    finally:
        _cleanup(app, master, pids_file)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--phases", default="", help="comma-separated phase names (all by default)")
    p.add_argument(
        "--json", metavar="FILE", help="also write the medians to FILE as JSON (benchmarks/speed.py reads it)"
    )
    args = p.parse_args()
    wanted = {name.strip() for name in args.phases.split(",") if name.strip()}
    phases = [row for row in PHASES if not wanted or row[0] in wanted]
    if wanted - {row[0] for row in phases}:
        p.error(f"unknown phases: {sorted(wanted - {row[0] for row in phases})}; known: {[r[0] for r in PHASES]}")
    load_start = os.getloadavg()
    print(f"load average at the start: {load_start[0]:.2f} {load_start[1]:.2f} {load_start[2]:.2f}", flush=True)
    idle: list[float] = []
    times: dict[str, list[tuple[float, float]]] = {row[0]: [] for row in phases}
    left: dict[str, int] = {row[0]: 0 for row in phases}
    with tempfile.TemporaryDirectory(prefix="quit-bench-") as tmp:
        for round_ in range(args.rounds):
            for n, (phase, snippet, backend, shown, extra) in enumerate(phases):
                if n % 3 == 0:  # an idle quit between every few phases, so each round has its own
                    folder = Path(tmp) / f"idle-{round_}-{n}"
                    folder.mkdir()
                    idle.append(idle_quit(folder))
                folder = Path(tmp) / f"{round_}-{n}"
                folder.mkdir()
                back, exited, alive = phase_quit(folder, phase, snippet, backend, shown, extra)
                times[phase].append((back, exited))
                left[phase] += len(alive)
    idle_s = statistics.median(idle)
    print(f"q when idle: exited after {idle_s * 1e3:.0f} ms (median of {len(idle)})")
    print(f"{'phase':<22} {'terminal back':>13} {'exited':>8} {'exited/idle':>11} {'left':>5}")
    medians = {}
    for phase, rows in times.items():
        back = statistics.median(r[0] for r in rows)
        exited = statistics.median(r[1] for r in rows)
        medians[phase] = {"back_s": back, "exited_s": exited, "left": left[phase]}
        print(f"{phase:<22} {back * 1e3:>10.0f} ms {exited * 1e3:>5.0f} ms {exited / idle_s:>10.2f}x {left[phase]:>5}")
    load = os.getloadavg()
    print(f"load average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    if args.json:
        summary = {"load_start": load_start, "load_end": load, "idle_s": idle_s, "phases": medians}
        Path(args.json).write_text(json.dumps(summary))
    return 0 if not any(left.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
