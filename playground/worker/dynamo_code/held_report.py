"""The code Dynamo wrote, collected by a second child after the run. The template's
side, torch-free; the second child's work is depyf_rerun.py. Worker-side.

Why a second child: depyf.prepare_debug swaps the bytecode Dynamo wrote for depyf's own
recompiled version while it records, so a run under it would run, and time, depyf's code
rather than torch's. A run asked for Dynamo's code therefore runs exactly as one that was not
(its child never imports depyf), except that it sends its report down a pipe of its own to the
template (process/readback.py) instead of to the client. When that child ended well, the
template forks a second child from the same clean state, which loads the snippet and makes its
calls again under depyf (depyf_run.collect) and sends what depyf decompiled down its own pipe.
Neither is a file: nothing the snippet puts in a folder (a FIFO where the report would be) is
read, or can keep the template waiting past the run's timeout. The template puts the two together through the report's codec and sends one report: the client's protocol does not
change. If the second child fails, hangs (the run's timeout applies to it as well) or dies, the
report is still the first child's and `dynamo_code_note` says why no code came. A cancel kills
whichever of the two is running, and the run is cancelled.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from playground.engine.events import Progress
from playground.engine.report import DynamoCode, Report
from playground.worker.run.spine.request import WorkerRequest

#: Where the code comes from, when a child never gets to say (the note starts "depyf failed"
#: for the Code pane to show it as a warning).
_SECOND = "its run of the snippet (a second process, after the report's run)"


class CodeRun:
    """One run asked for Dynamo's code: what its two children send back, and the one report the
    template makes of them."""

    def __init__(self, request: WorkerRequest) -> None:
        self.request = request

    @classmethod
    def asked(cls, request: WorkerRequest) -> CodeRun | None:
        """The code run of `request`, None when it did not ask for Dynamo's code."""
        return cls(request) if request.run.passes.dynamo_code else None

    def run_request(self) -> WorkerRequest:
        """The request for the run's child: the run as asked, its report held for the template."""
        return replace(self.request, held=True)

    def code_request(self) -> WorkerRequest:
        """The request for the code child: the same snippet and settings, nothing timed or traced."""
        untimed = replace(self.request.run.flags, timing=False)
        return self.request.with_run(flags=untimed, trace=False)

    def progress(self) -> dict[str, Any]:
        """What the client shows while the code child runs."""
        words = "collecting the code Dynamo wrote: the snippet runs again under depyf"
        return Progress("dynamo_code", message=words, run_id=self.request.id).to_dict()

    @staticmethod
    def held(message: dict[str, Any] | None) -> dict[str, Any] | None:
        """The run's report message as its child sent it back; None when it sent none (it died,
        or the snippet called os._exit: the template's "ended" says so)."""
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

    def result(
        self, outcome: str, status: dict[str, Any], timeout: float | None, found: dict[str, Any] | None
    ) -> tuple[Any, str]:
        """(items, note) from the code child that ended with `outcome` and `status`, having sent
        back `found`."""
        found = found if outcome == "ok" else None
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
