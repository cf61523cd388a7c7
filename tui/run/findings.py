"""What a run's compile error means, read from the report alone.

Two compile errors are not failures of the run and are worded as what they are:
- under fullgraph=True, Dynamo raising at a graph break is the run's finding: the break it
  refused, shown as a break site (line, reason, torch's explanation and hints, GB id);
- a backend that torch registers but whose package is not installed (tvm, openxla) is a
  missing install, said as such rather than as a `BackendCompilerFailed`.

Pure functions of `Report` values; nothing here imports the rest of the UI, so panes, bars
and the pipeline can all use it.
"""

from __future__ import annotations

import re

from playground.engine.report import GraphBreak, Report

#: torch's link to the graph-break site page names the GB id: .../gb/gb0059.html.
_GB_LINK = re.compile(r"/gb/(gb\d+)\.html", re.IGNORECASE)
#: The worker's prefix on an error raised by a compiled call (playground/worker/run/calls.py).
_CALL_PREFIX = re.compile(r"^compiled call \d+ raised:\s*")
_EXPLANATION = re.compile(r"^\s*Explanation:\s*(.+)$")
_HINT = re.compile(r"^\s*Hint:\s*(.+)$")
#: A missing backend package, as the backends word it: "ImportError: Please install apache-tvm…".
_MISSING = re.compile(r"^(?:\S+\.)?(?:ImportError|ModuleNotFoundError):\s*(.+)$", re.MULTILINE)


def _is_break_refusal(report: Report) -> bool:
    error = report.error
    if error is None or error.kind != "compile" or not report.settings.fullgraph:
        return False
    if error.type == "Unsupported":
        return True  # the exception every graph break raises when it may not split the graph
    # A data-dependent `if` on a float .item(): a Tensor.item() break without fullgraph
    # (TORCH_NOTES.md); with it, Dynamo refuses to guard on the value instead.
    return error.type == "UserError" and "data-dependent" in error.message.lower()


def refused_break(report: Report | None) -> GraphBreak | None:
    """The graph break fullgraph=True refused in this run, as a break site; None when the
    run's error is anything else (or there is none)."""
    if report is None or not _is_break_refusal(report):
        return None
    error = report.error
    assert error is not None
    lines = error.detail.splitlines()
    explanation = next((m.group(1) for m in map(_EXPLANATION.match, lines) if m), "")
    hints = tuple(m.group(1) for m in map(_HINT.match, lines) if m)
    link = _GB_LINK.search(error.detail)
    reason = refusal_reason(report)
    if explanation and reason.endswith(explanation) and reason != explanation:
        # Some messages carry the explanation after the type: it has its own line in the pane.
        reason = reason[: -len(explanation)].rstrip(": ")
    return GraphBreak(
        reason=reason,
        hint=hints[0] if hints else "",
        file="",
        line=error.line,
        count=1,
        gb_id=link.group(1).upper() if link else None,
        explanation=explanation,
        hints=hints,
        detail=error.detail,
    )


def refusal_reason(report: Report) -> str:
    """The error's first line without the worker's "compiled call N raised:" prefix."""
    error = report.error
    first = error.message.splitlines()[0] if error and error.message else ""
    reason = _CALL_PREFIX.sub("", first).strip()
    if error is not None and error.type == "UserError":
        # "Consider annotating your code using torch._check*(). Could not guard on
        # data-dependent expression …": the sentence that says what was refused comes second.
        reason = next((s for s in reason.split(". ") if "data-dependent" in s), reason)
    return reason


def refusal_words(report: Report, width: int = 70) -> str:
    """`fullgraph=True refused the break at line 33: Unsupported: <reason> (GB0059)`, or ""."""
    site = refused_break(report)
    if site is None or report.error is None:
        return ""
    where = f" at line {site.line}" if site.line else ""
    gb = f" ({site.gb_id})" if site.gb_id else ""
    reason = site.reason if len(site.reason) <= width else site.reason[: width - 1] + "…"
    return f"fullgraph=True refused the break{where}: {report.error.type}: {reason}{gb}"


def missing_backend(report: Report | None) -> str:
    """`backend tvm needs a package that is not installed here: <torch's words>` when the
    run's backend could not be loaded; "" otherwise. Only from what the error says, never
    guessed from the backend's name."""
    if report is None or report.error is None:
        return ""
    error, backend = report.error, report.settings.backend
    if error.kind == "settings" and error.type == "InvalidBackend":
        return f"backend {backend} is not available in this torch (see ctrl+p for the ones it has)"
    if error.kind == "compile" and error.type == "BackendCompilerFailed":
        found = _MISSING.search(error.detail)
        if found:
            # torch's first sentence names the package; the rest is a link for the Output pane.
            words = found.group(1).strip().split(". ")[0].rstrip(".")
            return f"backend {backend} needs a package that is not installed here: {words}"
    return ""
