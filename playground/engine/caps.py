"""How much of one text the report keeps: every string that comes from the snippet or from
torch (a log, a break's detail, a guard, a reason, an exception's message) has a stated limit,
and what is cut says so with a "… N more bytes" marker.

A snippet can put any text in them: a 10 MB line printed inside `fn` is in torch's graph-break
record, then in the break's detail and in the `graph_breaks` log, and each view drew it whole
(`check --json` printed 20 MB; the Logs pane froze the app for a minute). Applied where a
message is sent (the worker) and where it is read (the client), so neither the pipe, the JSON
nor a pane ever carries more. Torch-free and dependency-free.
"""

from __future__ import annotations

from typing import Any

KIB = 1024

#: The limit, in UTF-8 bytes, by the key that holds the text (at any depth of the report).
LIMITS: dict[str, int] = {
    # torch's log artifacts as TORCH_LOGS prints them
    "graph_breaks": 64 * KIB,
    "recompiles": 64 * KIB,
    "guards": 64 * KIB,
    # torch's message about one break, and an exception's message and traceback
    "detail": 16 * KIB,
    "message": 16 * KIB,
    # the snippet's output: already cut to its head and tail by the worker (48 + 16 KiB)
    "text": 80 * KIB,
    # code torch wrote (FX graphs, Inductor's output, Dynamo's decompiled bytecode)
    "code": 1024 * KIB,
    "output_code": 1024 * KIB,
    "source": 1024 * KIB,
}

#: Any other string: a reason, a hint, a guard, a name, a note.
DEFAULT_LIMIT = 4 * KIB

#: Top-level message keys that are not report text: the structured trace is written whole to a
#: file for tlparse, never drawn.
UNCAPPED = frozenset({"trace"})

_RESERVE = 32  # room for the marker, so that a capped text is within its limit (capping twice is a no-op)


def cap(text: str, limit: int = DEFAULT_LIMIT) -> str:
    """`text` cut to at most `limit` UTF-8 bytes, the cut marked "… N more bytes"."""
    if len(text) * 4 <= limit:
        return text  # cannot be over, whatever its characters
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= limit:
        return text
    kept = data[: max(limit - _RESERVE, 0)].decode("utf-8", "ignore")
    more = len(data) - len(kept.encode("utf-8", "surrogatepass"))
    gap = "\n" if "\n" in kept else " "
    return f"{kept}{gap}… {more} more bytes"


def cap_all(value: Any, key: str = "") -> Any:
    """A JSON-like value (a message, a report dict) with every string in it capped: by the limit
    of the key that holds it, else `DEFAULT_LIMIT`. Dict keys are capped too. Returns the same
    object where nothing needed cutting."""
    if isinstance(value, str):
        return cap(value, LIMITS.get(key, DEFAULT_LIMIT))
    if isinstance(value, dict):
        out: dict[Any, Any] | None = None
        for name, item in value.items():
            if name in UNCAPPED and not key:
                continue
            new_name = cap(name) if isinstance(name, str) else name
            new = cap_all(item, name if isinstance(name, str) else key)
            if new is not item or new_name is not name:
                if out is None:
                    out = dict(value)
                if new_name is not name:
                    del out[name]
                out[new_name] = new
        return value if out is None else out
    if isinstance(value, list | tuple):
        items: list[Any] | None = None
        for index, item in enumerate(value):
            new = cap_all(item, f"{key}[]")  # a list's strings: the default (a guard, not a log)
            if new is not item:
                if items is None:
                    items = list(value)
                items[index] = new
        return value if items is None else items
    return value
