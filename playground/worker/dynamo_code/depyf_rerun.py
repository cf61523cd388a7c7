"""The code run: the snippet loaded and called once more, under depyf, only to read back
the code Dynamo wrote. It runs in a second child that the template forks after the report's run
ended (dynamo_code/held_report.py says why), never in the run whose numbers the report gives. Worker-side.

No equivalence, no timing, no trace: the calls of inputs() (eager, then compiled, as the run
made them, so that Dynamo compiles the same frames with the same guards) under
depyf.prepare_debug, which writes on its way out what depyf_dump.read_dump parses.
"""

from __future__ import annotations

import shutil
import tempfile
from typing import Any

from playground.worker import compat
from playground.worker.capture.records import Capturer, RunCapture
from playground.worker.dynamo_code import bytecode, depyf_dump
from playground.worker.run.spine import loading, switches
from playground.worker.run.spine.calls import run_calls
from playground.worker.run.spine.context import Emit, RunContext
from playground.worker.run.spine.failures import RunFailure, first_line, safe_str
from playground.worker.run.spine.request import WorkerRequest

#: What the note says of where the code came from (the TUI and the tests read its start).
FROM_DEPYF = "decompiled by depyf {version} in a second run of the snippet, after the report's run"


def collect(capturer: Capturer, request: WorkerRequest, emit: Emit) -> dict[str, Any]:
    """The code Dynamo wrote in one more run of the request's calls under depyf:
    {"items": [...], "note": "..."} (items as depyf_dump.read_dump gives them)."""
    ctx = RunContext(request, emit, lambda: False)
    version = compat.depyf_version() or "?"
    compat.clear_run_state()
    capture = capturer.begin(request.run.path)
    scope = loading.SnippetScope(request.run.path, f"compile_playground_snippet_{request.id}", not request.warmup)
    directory = tempfile.mkdtemp(prefix="compile-playground-depyf-")
    stopped = ""
    recorded: list[tuple[str, Any]] = []  # torch's own record of the code it wrote: the fallback
    try:
        with (
            compat.compile_caches_disabled(request.run.settings.cold),
            compat.deterministic_inductor_rng(),
            switches.applied(request.run.settings),
            compat.transformed_code_recorded(recorded),
        ):
            loaded = loading.prepare(ctx, loading.load(ctx, scope))
            with compat.dynamo_code_dumped(directory):
                stopped = _calls(ctx, loaded, capture)
        note = FROM_DEPYF.format(version=version)
        if stopped:
            note += f"; that run stopped early: {stopped}"
    except RunFailure as exc:  # loading failed: nothing was compiled
        note = FROM_DEPYF.format(version=version) + f"; that run stopped early: {exc.error.message}"
    except Exception as exc:  # noqa: BLE001 - depyf's own failure costs the view only, never the run
        note = f"depyf failed: {type(exc).__name__}: {first_line(safe_str(exc))}"[:300]
    finally:
        capturer.end()
        scope.close()
    try:
        items, shown = bytecode.filled(depyf_dump.read_dump(directory, request.run.path), recorded)
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    if not items and recorded:  # depyf wrote nothing (it raised): torch's bytecode, each frame
        items = bytecode.items_of(recorded)
        shown = len(items)
    if shown:
        note += bytecode.note(shown, sum(1 for i in items if i["kind"] == "transformed"))
    return {"items": items, "note": note}


def _calls(ctx: RunContext, loaded: loading.Loaded, capture: RunCapture) -> str:
    """The calls, inside depyf's recording; a call that raises ends them (depyf still writes
    what Dynamo made so far): its message, else ""."""
    try:
        run_calls(ctx, loaded, capture)
    except RunFailure as exc:
        return exc.error.message
    return ""
