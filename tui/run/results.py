"""The reports the screen shows: the newest good one, the newest of any kind, and the history."""

from __future__ import annotations

from playground.engine.history import History
from playground.engine.report import Report
from tui.run.compare import BeforeAfter, since_previous
from tui.run.early import EarlyFindings
from tui.run.findings import missing_backend, refused_break


def is_good(report: Report) -> bool:
    """Shown as the current result: no error, or a break refused under fullgraph=True (this
    run's finding, not a failure: never STALE, the refused line marked as a break)."""
    return report.error is None or refused_break(report) is not None


def has_findings(report: Report) -> bool:
    """A complete program's report with its compiled callables: worth showing whatever ended it."""
    return report.kind == "program" and report.stage == "complete" and bool(report.callables)


def short_error(report: Report) -> str:
    """The error for the summary bar: who failed, where, and the exception type; the full
    message is in the source and output panes."""
    error = report.error
    if error is None:
        return ""
    if missing_backend(report):
        return missing_backend(report)
    where = f" at line {error.line}" if error.line else ""
    return f"{error.blamed(report.kind == 'program')} error{where}: {error.type or 'see Output'}"


class RunResults:
    """`good` is the newest result without a failure, `attempt` the newest of any kind;
    `history` keeps every complete run with the text that ran, `since` the newest against the
    previous one with the same settings, `early` the findings shown before the complete report."""

    def __init__(self) -> None:
        self.good: Report | None = None
        self.good_generation = -1
        self.attempt: Report | None = None
        self.history = History()
        self.since: BeforeAfter | None = None
        #: Dynamo's findings of the newest run while its backend compiles (early.py).
        self.early = EarlyFindings()

    def clear(self) -> None:
        """Another snippet: before/after compares versions of one file, so it starts afresh."""
        self.good, self.good_generation, self.attempt = None, -1, None
        self.history, self.since = History(), None
        self.early = EarlyFindings()

    def stale(self, generation: int, source_sha: str) -> bool:
        """Whether `good` is not the result of the newest request or of the text on screen."""
        good = self.good
        return good is not None and (
            self.good_generation != generation or (bool(good.content_sha256) and good.content_sha256 != source_sha)
        )

    def shown(self) -> Report | None:
        """The newest run's report when the worker made it (a refused compile is worth a
        report too), else the newest good one. Engine failures have no torch version."""
        attempt = self.attempt
        if attempt is not None and attempt.torch_version:
            return attempt
        return self.good

    def arrived(self, report: Report, generation: int) -> bool:
        """A report of the newest run (diagnostics or final); True when it is a good one. A
        program that ended in its own error still made its findings (sections, values, times):
        the panes show them, while the summary says the error."""
        self.attempt = report
        if report.stage != "complete":
            # A new run's findings or diagnostics are on screen: what changed between the two
            # runs before it is not news about them (record() pairs this run once it is complete).
            self.since = None
        if is_good(report) or has_findings(report):
            self.good, self.good_generation = report, generation
        return is_good(report)

    def failed(self, report: Report) -> None:
        """The engine itself failed: `report` holds only the error."""
        self.attempt = report

    def record(self, report: Report, source: str, source_sha: str) -> None:
        """Keep a complete run with the text that ran (the hash says which) for before/after;
        a run whose text is no longer known is not kept rather than paired with the wrong text."""
        if report.stage != "complete" or (report.content_sha256 and report.content_sha256 != source_sha):
            self.since = None
            return
        entry = self.history.add(report, source)
        self.since = since_previous(self.history, entry)
