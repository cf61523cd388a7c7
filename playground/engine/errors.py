"""The engine's exceptions, in a module light enough for the app and fakes to import."""

from __future__ import annotations


class RunCancelled(Exception):
    """The run was cancelled by `cancel()` (a newer save made it stale)."""


class WorkerUnavailable(Exception):
    """The worker could not be started at all (torch missing or broken)."""
