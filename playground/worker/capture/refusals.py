"""What a run's compile error means, read once from torch's text where the error is made.

Two compile errors are not failures of the run and travel as what they are:
- under fullgraph=True, Dynamo raising at a graph break is the run's finding: the break it
  refused, as a break site (line, reason, torch's explanation and hints, GB id), the error's
  `refused`;
- a backend that torch registers but whose package is not installed (tvm, openxla): torch's
  words naming the package, the error's `missing_package`.

The engine's wording (playground/engine/wording/errors.py) and every view read those fields;
nothing outside the worker reads torch's error text.
"""

from __future__ import annotations

import re
from dataclasses import replace

from playground.engine.report import GraphBreak, RunError

#: torch's link to the graph-break site page names the GB id: .../gb/gb0059.html.
_GB_LINK = re.compile(r"/gb/(gb\d+)\.html", re.IGNORECASE)
#: The worker's prefix on an error raised by a compiled call (playground/worker/run/spine/calls.py).
_CALL_PREFIX = re.compile(r"^compiled call \d+ raised:\s*")
_EXPLANATION = re.compile(r"^\s*Explanation:\s*(.+)$")
_HINT = re.compile(r"^\s*Hint:\s*(.+)$")
#: A missing backend package, as the backends word it: "ImportError: Please install apache-tvm…".
_MISSING = re.compile(r"^(?:\S+\.)?(?:ImportError|ModuleNotFoundError):\s*(.+)$", re.MULTILINE)


def read_error(error: RunError | None, fullgraph: bool) -> RunError | None:
    """The run's error with what its text says filled in: the break fullgraph=True refused,
    the package a backend lacks."""
    if error is None:
        return None
    return replace(error, refused=refused_break(error, fullgraph), missing_package=missing_package(error))


def _is_break_refusal(error: RunError, fullgraph: bool) -> bool:
    if error.kind != "compile" or not fullgraph:
        return False
    if error.type == "Unsupported":
        return True  # the exception every graph break raises when it may not split the graph
    # A data-dependent `if` on a float .item(): a Tensor.item() break without fullgraph
    # (TORCH_NOTES.md); with it, Dynamo refuses to guard on the value instead.
    return error.type == "UserError" and "data-dependent" in error.message.lower()


def refused_break(error: RunError, fullgraph: bool) -> GraphBreak | None:
    """The graph break fullgraph=True refused, as a break site; None when the error is anything
    else. Its `detail` stays empty: the error's own `detail` holds torch's whole text."""
    if not _is_break_refusal(error, fullgraph):
        return None
    lines = error.detail.splitlines()
    explanation = next((m.group(1) for m in map(_EXPLANATION.match, lines) if m), "")
    hints = tuple(m.group(1) for m in map(_HINT.match, lines) if m)
    link = _GB_LINK.search(error.detail)
    reason = refusal_reason(error)
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
    )


def refusal_reason(error: RunError) -> str:
    """The error's first line without the worker's "compiled call N raised:" prefix."""
    first = error.message.splitlines()[0] if error.message else ""
    reason = _CALL_PREFIX.sub("", first).strip()
    if error.type == "UserError":
        # "Consider annotating your code using torch._check*(). Could not guard on
        # data-dependent expression …": the sentence that says what was refused comes second.
        reason = next((s for s in reason.split(". ") if "data-dependent" in s), reason)
    return reason


def missing_package(error: RunError) -> str:
    """torch's first sentence naming the package a backend needs (`Please install apache-tvm
    to use the tvm backend`), or "". Only from what the error says, never guessed from the
    backend's name."""
    if error.kind != "compile" or error.type != "BackendCompilerFailed":
        return ""
    found = _MISSING.search(error.detail)
    # torch's first sentence names the package; the rest is a link for the Output pane.
    return found.group(1).strip().split(". ")[0].rstrip(".") if found else ""
