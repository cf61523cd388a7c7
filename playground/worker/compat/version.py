"""The installed torch's version, and whether these hooks were checked on it."""

from __future__ import annotations

import re

import torch

#: Versions whose private hooks were checked against this package (major, minor).
TESTED_VERSIONS: tuple[tuple[int, int], ...] = ((2, 13), (2, 14))


def torch_version() -> tuple[int, int]:
    match = re.match(r"(\d+)\.(\d+)", torch.__version__)
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


def version_warning() -> str | None:
    """A note for reports when the installed torch is one these hooks were not checked on."""
    if torch_version() in TESTED_VERSIONS:
        return None
    tested = ", ".join(f"{a}.{b}" for a, b in TESTED_VERSIONS)
    return (
        f"torch {torch.__version__} is untested by compile-playground (tested: {tested}); diagnostics may be incomplete"
    )
