"""Fixes tried against one save, side by side in one warm worker.

For each lesson, interleaved: a plain save (the run as the app makes it on every save), then the
same save with its fixes tried (`Passes(fixes="all")`, what `F` and `--try-fixes` send). Printed:
the save's wall time; for the fixes run, when its own report arrived, when the first remedy's
result arrived, and when the last did, each from the request; and the ratio of the first result
to the save, with the load average beside them (the machine is shared: read ratios, not times).

    python benchmarks/fixes.py [--saves 3] [--timing] [snippets/fix_item.py ...]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from playground.engine.events import FixEvent
from playground.engine.passes import Passes
from playground.engine.run_request import RunFlags, RunRequest
from playground.engine.snippet import prepare_run
from playground.engine.sync import SyncWorker

ROOT = Path(__file__).resolve().parents[1]
LESSONS = ("snippets/fix_item.py", "snippets/fix_shape_recompile.py", "snippets/fix_helper.py")


def _once(worker: SyncWorker, path: str, passes: Passes, timing: bool) -> dict[str, float]:
    prepared = prepare_run(path, {})
    request = RunRequest(prepared, RunFlags(timing=timing, min_run_time=0.05), passes)
    marks: dict[str, float] = {}
    started = time.perf_counter()

    def seen(event: object) -> None:
        if isinstance(event, FixEvent):
            key = "report" if event.fix is None else "first"
            marks.setdefault(key, time.perf_counter() - started)

    result = worker.run(request, seen)
    marks["end"] = time.perf_counter() - started
    marks["fixes"] = len(result.report.fixes)
    return marks


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("lessons", nargs="*", default=LESSONS)
    parser.add_argument("--saves", type=int, default=3)
    parser.add_argument("--timing", action="store_true", help="time the steady state in every run, as a save does")
    args = parser.parse_args()
    with SyncWorker(timeout_s=300) as worker:
        worker.start()
        for lesson in args.lessons:
            path = str(ROOT / lesson)
            _once(worker, path, Passes(), args.timing)  # the lesson's imports, warmed once
            saves, report, first, end = [], [], [], []
            for _ in range(args.saves):
                saves.append(_once(worker, path, Passes(), args.timing)["end"])
                marks = _once(worker, path, Passes(fixes="all"), args.timing)
                report.append(marks["report"])
                first.append(marks["first"])
                end.append(marks["end"])
            save = statistics.median(saves)
            print(
                f"{Path(lesson).name:24s} save {save:5.2f} s | fixes: own report {statistics.median(report):5.2f} s, "
                f"first remedy {statistics.median(first):5.2f} s, all {int(marks['fixes'])} {statistics.median(end):5.2f} s"
                f" | first/save {statistics.median(first) / save:4.2f}x, first after its report "
                f"{(statistics.median(first) - statistics.median(report)) / save:4.2f}x"
                f" | load {os.getloadavg()[0]:.2f}"
            )


if __name__ == "__main__":
    main()
