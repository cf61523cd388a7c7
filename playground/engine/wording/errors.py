"""A run's error in words, the same in every view (the app's panes and bars, `check`'s text,
the Markdown export): a break fullgraph=True refused is said as the run's finding, a backend
whose package is missing as a missing install. Read from the error's typed fields, which the
worker fills from torch's text (playground/worker/capture/refusals.py)."""

from __future__ import annotations

from playground.engine.report import GraphBreak, Report

#: The columns a refusal's reason takes in a view with room for it (the Source pane's head,
#: `check`'s text): the same words in both.
FULL_WIDTH = 90


def refused_break(report: Report | None) -> GraphBreak | None:
    """The graph break fullgraph=True refused in this run, as a break site; None when the
    run's error is anything else (or there is none)."""
    if report is None or report.error is None:
        return None
    return report.error.refused


def refusal_words(report: Report | None, width: int = 70) -> str:
    """`fullgraph=True refused the break at line 33: Unsupported: <reason> (GB0059)`, or ""."""
    site = refused_break(report)
    if site is None or report is None or report.error is None:
        return ""
    where = f" at line {site.line}" if site.line else ""
    gb = f" ({site.gb_id})" if site.gb_id else ""
    reason = site.reason if len(site.reason) <= width else site.reason[: width - 1] + "…"
    return f"fullgraph=True refused the break{where}: {report.error.type}: {reason}{gb}"


def missing_backend(report: Report | None) -> str:
    """`backend tvm needs a package that is not installed here: <torch's words>` when the
    run's backend could not be loaded; "" otherwise."""
    if report is None or report.error is None:
        return ""
    error, backend = report.error, report.settings.backend
    if error.kind == "settings" and error.type == "InvalidBackend":
        return f"backend {backend} is not available in this torch (see ctrl+p for the ones it has)"
    if error.missing_package:
        return f"backend {backend} needs a package that is not installed here: {error.missing_package}"
    return ""
