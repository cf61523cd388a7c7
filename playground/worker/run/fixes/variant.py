"""One remedy as the variant's request: the same save and settings, the change applied in memory
(config pairs through the settings as --config sets them, `dynamic` as --dynamic does, code
appended below the user's last line). The user's file is never touched. Worker-side, torch-free.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from playground.engine.passes import NO_PASSES
from playground.worker.run.fixes.candidates import Candidate
from playground.worker.run.spine.request import WorkerRequest


def variant_id(base: Any, number: int) -> str:
    """The variant's run id: a name the snippet's module can take (compile_playground_snippet_ID)."""
    return f"{base}_fix{number}"


def variant_request(base: WorkerRequest, candidate: Candidate, number: int, report_to: str) -> WorkerRequest:
    """The request the variant's child runs: `base` with the candidate's change, its report
    written to `report_to`, no passes, no trace, no next run to warm a spare for."""
    settings = base.run.settings
    for key, value in candidate.config:
        settings = settings.with_config(key, value)
    if candidate.sets_dynamic:
        settings = replace(settings, dynamic=candidate.dynamic)
    prepared = replace(base.run.prepared, settings=settings)
    source = prepared.source
    if candidate.epilogue and source is not None:
        text = source.text if source.text.endswith("\n") else source.text + "\n"
        prepared = replace(prepared, source=replace(source, text=text + candidate.epilogue))
    run = replace(base.run, prepared=prepared, passes=NO_PASSES, trace=False, last=True)
    return replace(base.unsigned(), run=run, id=variant_id(base.id, number), report_to=report_to, code_to="")


def reference_request(base: WorkerRequest, variant: WorkerRequest) -> WorkerRequest:
    """What the variant's eager reference loads: the user's text as it is, under the variant's id
    (the module's name, by which the snippet's classes are found again)."""
    return replace(
        variant, run=replace(variant.run, prepared=replace(variant.run.prepared, source=base.run.prepared.source))
    )
