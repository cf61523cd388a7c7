"""The code Dynamo wrote, decompiled (extension fields; the worker's dynamo_code/ builds them)."""

from __future__ import annotations

from dataclasses import dataclass

from playground.engine.report.wire import Wire


@dataclass(frozen=True)
class DynamoCode(Wire):
    """One piece of code Dynamo wrote, decompiled by depyf: `kind` "transformed" (the frame's
    new bytecode), "resume" (the function that continues after a graph break; torch names it
    after the break's line, `resumes_at_line`) or "guard" (the check before a cache entry runs)."""

    name: str = ""
    kind: str = ""
    function: str = ""
    resumes_at_line: int | None = None
    entry: int | None = None
    source: str = ""
