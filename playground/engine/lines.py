"""One JSON object per line: the form every message takes on the worker's pipe, in a file of a
held report and in a rank's shared report. JSON has no NaN or infinity, so a value is sanitized
before it is encoded. Torch-free: the worker and the engine both use it.
"""

from __future__ import annotations

import json
from typing import Any


def encode(message: dict[str, Any]) -> bytes:
    """One message as the line the channel carries."""
    return (json.dumps(message, default=_json_default, allow_nan=False) + "\n").encode()


def _json_default(value: Any) -> Any:
    return repr(value)


def sanitize(value: Any) -> Any:
    """JSON has no NaN or infinity: they become None."""
    if isinstance(value, float):
        return value if value == value and value not in (float("inf"), float("-inf")) else None
    if isinstance(value, dict):
        return {str(k): sanitize(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [sanitize(v) for v in value]
    return value
