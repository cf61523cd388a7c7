"""Why it recompiled, where each guard came from, the shape symbols, which entry ran each call.

It shapes text and records torch already produced (the recompiles_verbose log, the guard dump,
the structured trace's symbolic-shapes events) and the worker's per-call notes into the
report's extension fields, once, in the worker: the engine and the views read those fields.
Nothing here guesses: a value the records do not hold stays "".

One module per kind of text: `guard_text` (a guard or reason split into its parts), `guards`
(the guard dump), `recompiles` (recompiles_verbose, recompile_limit, per call), `shapes` (the
symbolic-shapes events).
"""

from __future__ import annotations

from playground.engine.explain import snippet_line
from playground.worker.capture.explain.guard_text import GuardText, guarded_arg, split_guard, user_name
from playground.worker.capture.explain.guards import (
    INTERNAL_KINDS,
    VALUE_KINDS,
    guard_details,
    guard_rank,
    is_bookkeeping,
    parse_guard,
    short_guard,
    value_leaf,
)
from playground.worker.capture.explain.recompiles import (
    RecompileRecord,
    call_summary,
    limit_details,
    parse_recompile_message,
    reason_row,
    recompile_details,
)
from playground.worker.capture.explain.shapes import shape_symbols, specializations

__all__ = [
    "INTERNAL_KINDS",
    "VALUE_KINDS",
    "GuardText",
    "RecompileRecord",
    "call_summary",
    "guard_details",
    "guard_rank",
    "guarded_arg",
    "is_bookkeeping",
    "limit_details",
    "parse_guard",
    "parse_recompile_message",
    "reason_row",
    "recompile_details",
    "shape_symbols",
    "short_guard",
    "snippet_line",
    "specializations",
    "split_guard",
    "user_name",
    "value_leaf",
]
