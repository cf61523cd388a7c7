"""The code Dynamo wrote, in words: what each piece is (the frame's transformed bytecode, the
resume function after a break, a cache entry's guard) and the one-line summary, for the app's
Code pane, `check --code`'s text and the Markdown export alike. The code itself is depyf's;
a view sets it as code."""

from __future__ import annotations

from playground.engine.report import DynamoCode, Report
from playground.engine.wording.line import CODE, DIM, HEADING, WARN, Line, plural

KIND_WORDS = {
    "transformed": "transformed code",
    "resume": "resume function",
    "guard": "guard function",
}

#: What a view says before a run was asked for Dynamo's code.
NOT_ASKED = (
    "Dynamo's code is decompiled (by depyf) only in runs that ask for it: it costs a second run of "
    "the snippet after the report's run (about 0.4 s on a small one). Opening this pane asks for "
    "it: the next run fills it."
)
#: What it says while a run is still going: the code comes last, from that second run.
PENDING = "Dynamo's code, when this run asked for it, comes last: depyf decompiles it in a second run of the snippet."
NO_FRAME = "no code: Dynamo compiled no frame in this run"
#: A run across ranks has none: depyf's second run of the snippet is not made on N processes.
ACROSS_RANKS = "Dynamo's code is not shown for a run across ranks: with ranks at 1, opening this pane shows it."


def note_line(report: Report) -> Line | None:
    """depyf's note (its version, or why there is no code), warned when something failed."""
    note = report.dynamo_code_note
    if not note:
        return None
    bad = "not installed" in note or "failed" in note
    return Line.of(note, tag=WARN if bad else DIM)


def summary_line(items: tuple[DynamoCode, ...]) -> Line:
    """How many frames Dynamo compiled, and the break lines its resume functions continue after."""
    resumes = sorted({i.resumes_at_line for i in items if i.kind == "resume" and i.resumes_at_line})
    frames = plural(len({i.function for i in items}), "compiled frame")
    if resumes:
        where = ", ".join(str(n) for n in resumes)
        return Line.of((frames, HEADING), (f"  resume after the break at line {where}", WARN))
    return Line.of((frames, HEADING), ("  no graph break: no resume function", DIM))


def heading_line(item: DynamoCode) -> Line:
    """What one piece of code is, before its source."""
    parts: list[str | tuple[str, str]] = [
        (KIND_WORDS.get(item.kind, item.kind), HEADING),
        "  ",
        (item.name, CODE),
    ]
    if item.kind == "resume" and item.resumes_at_line is not None:
        parts.append((f"  resumes after the break at line {item.resumes_at_line}", WARN))
    elif item.entry is not None and item.kind == "guard":
        parts.append((f"  (cache entry {item.entry} of {item.function})", DIM))
    return Line.of(*parts)
