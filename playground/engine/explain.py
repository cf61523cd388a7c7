"""Whether a location torch wrote (a log's, a guard comment's, a trace stack's) is the snippet's.

Torch-free and free of torch's text formats: a path test, the one every record's reader in the
worker uses (playground/worker/capture/). Reading torch's text itself happens in the worker
(playground/worker/capture/explain/, reasons.py, refusals.py).
"""

from __future__ import annotations

import os


def snippet_line(file: str, line: int | None, snippet_path: str) -> int | None:
    """`line` when `file` is the snippet, else None: the one test of "is this location the
    snippet's" for every record torch writes (a log, a guard's comment, a trace's stack).

    torch shortens the paths in its comments by cutting characters off the front, not folders
    (`/tmp/h11/s.py` -> `mp/h11/s.py`, torch.utils._traceback.shorten_filename), so a relative
    path counts when it is a suffix of the snippet's real path that ends in its whole name. An
    absolute path is never shortened: it must be the snippet itself."""
    if line is None or not file:
        return None
    try:
        real = os.path.realpath(snippet_path)
        if file == snippet_path or os.path.realpath(file) == real:
            return line
    except (OSError, ValueError):  # a NUL byte in a path torch or the user wrote
        return line if file == snippet_path else None
    tail = file.replace("\\", "/")
    if tail.startswith("/") or os.path.basename(tail) != os.path.basename(real):
        return None
    return line if real.replace("\\", "/").endswith(tail) else None
