"""The code Dynamo wrote, collected by a second child after the run. The template's
side, torch-free; the second child's work is depyf_rerun.py. Worker-side.

Why a second child: depyf.prepare_debug swaps the bytecode Dynamo wrote for depyf's own
recompiled version while it records, so a run under it would run, and time, depyf's code
rather than torch's. A run asked for Dynamo's code therefore runs exactly as one that was not
(its child never imports depyf), except that it writes its report to a file the template holds
instead of sending it. When that child ended well, the template forks a second child from the
same clean state, which loads the snippet and makes its calls again under depyf
(depyf_run.collect) and writes what depyf decompiled to a second file. The template puts the
two together through the report's codec and sends one report: the client's protocol does not
change. If the second child fails, hangs (the run's timeout applies to it as well) or dies, the
report is still the first child's and `dynamo_code_note` says why no code came. A cancel kills
whichever of the two is running, and the run is cancelled.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import replace
from typing import Any

from playground.engine.events import Progress
from playground.engine.lines import encode
from playground.engine.report import DynamoCode, Report
from playground.worker.run.spine.request import WorkerRequest

#: Where the code comes from, when a child never gets to say (the note starts "depyf failed"
#: for the Code pane to show it as a warning).
_SECOND = "its run of the snippet (a second process, after the report's run)"


def write_json(path: str, message: dict[str, Any]) -> None:
    """`message` into `path` whole or not at all: a child killed mid-write leaves no file."""
    partial = f"{path}.part"
    with open(partial, "wb") as fh:
        fh.write(encode(message))
    os.replace(partial, path)


def _read_json(path: str) -> Any:
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


class CodeRun:
    """One run asked for Dynamo's code: the files its two children write, and the one report
    the template makes of them."""

    def __init__(self, request: WorkerRequest) -> None:
        self.request = request
        self.directory = tempfile.mkdtemp(prefix="compile-playground-code-")
        self.report_path = os.path.join(self.directory, "report.json")
        self.code_path = os.path.join(self.directory, "code.json")

    @classmethod
    def asked(cls, request: WorkerRequest) -> CodeRun | None:
        """The code run of `request`, None when it did not ask for Dynamo's code."""
        return cls(request) if request.run.passes.dynamo_code else None

    def close(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)

    def run_request(self) -> WorkerRequest:
        """The request for the run's child: the run as asked, its report held in a file."""
        return replace(self.request, report_to=self.report_path)

    def code_request(self) -> WorkerRequest:
        """The request for the code child: the same snippet and settings, nothing timed or traced."""
        untimed = replace(self.request.run.flags, timing=False)
        return replace(self.request.with_run(flags=untimed, trace=False), code_to=self.code_path)

    def progress(self) -> dict[str, Any]:
        """What the client shows while the code child runs."""
        words = "collecting the code Dynamo wrote: the snippet runs again under depyf"
        return Progress("dynamo_code", message=words, run_id=self.request.id).to_dict()

    def held(self) -> dict[str, Any] | None:
        """The run's report message as its child wrote it; None when it wrote none (it died,
        or the snippet called os._exit: the template's "ended" says so)."""
        message = _read_json(self.report_path)
        return message if isinstance(message, dict) and isinstance(message.get("report"), dict) else None

    def without_child(self, held: dict[str, Any], isolated: bool, depyf: str | None) -> tuple[Any, str] | None:
        """(items, note) when no code child is to run, None when one is."""
        error = held["report"].get("error")
        if isinstance(error, dict) and error.get("kind") == "settings":
            return None, ""  # the run never reached its calls, the code run would not either
        if depyf is None:
            return None, "depyf is not installed in the worker's environment: pip install depyf"
        if not isolated:
            return [], (
                "depyf failed: not run, as this worker runs without isolation (COMPILE_PLAYGROUND_ISOLATION=none) "
                "and depyf's run needs a process of its own"
            )
        return None

    def result(self, outcome: str, status: dict[str, Any], timeout: float | None) -> tuple[Any, str]:
        """(items, note) from the code child that ended with `outcome` and `status`."""
        found = _read_json(self.code_path) if outcome == "ok" else None
        if isinstance(found, dict) and isinstance(found.get("note"), str):
            items = found.get("items")
            return (items if isinstance(items, list) else None), found["note"]
        if outcome == "timeout":
            return [], f"depyf failed: {_SECOND} timed out after {timeout or 0:g} s and was killed"
        if "signal" in status:
            return [], f"depyf failed: {_SECOND} was killed by {status['signal']}"
        if status.get("returncode") == 0:
            return [], f"depyf failed: {_SECOND} exited before writing what depyf found (the snippet called os._exit?)"
        return [], f"depyf failed: {_SECOND} exited with code {status.get('returncode')}"

    @staticmethod
    def merged(held: dict[str, Any], items: Any, note: str) -> dict[str, Any]:
        """The held report message with the code fields, through the one codec."""
        report = Report.from_dict(held["report"])
        code = None if items is None else tuple(DynamoCode.from_dict(item) for item in items)
        report = replace(report, dynamo_code=code, dynamo_code_note=note)
        return {**held, "report": report.to_dict()}
