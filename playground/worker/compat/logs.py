"""torch's logging: the artifact loggers we capture, their formatter, and the structured trace's
logger and interned file names."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

import torch
import torch._logging

#: The artifact loggers are named "<module>.__<artifact>"; these suffixes pick them out.
ARTIFACTS = ("graph_breaks", "recompiles", "guards")


#: Artifacts logged under another name that count as one of ARTIFACTS: with recompiles_verbose on,
#: torch logs every recompile to `__recompiles_verbose` instead of `__recompiles` (guards.py).
ARTIFACT_ALIASES = {"recompiles_verbose": "recompiles"}


def enable_artifact_logs() -> None:
    """What TORCH_LOGS=graph_breaks,recompiles_verbose,guards turns on, plus the dynamo warnings
    (recompile_limit) at their default level. recompiles_verbose lists the failing guard of every
    cache entry (with its user stack), where plain recompiles stops at the first entry's."""
    torch._logging.set_logs(graph_breaks=True, recompiles=True, recompiles_verbose=True, guards=True)


@contextmanager
def artifact_logs_off() -> Iterator[None]:
    """torch's logs at their defaults for a while, then ours again: with the guards artifact on,
    Dynamo hands a guard filter every value guard twice (measured on 2.13 and 2.14: 267 entries
    where a plain program's filter gets 139; the guard tree is the same)."""
    torch._logging.set_logs()
    try:
        yield
    finally:
        enable_artifact_logs()


def registered_logger_names() -> list[str]:
    from torch._logging._internal import log_registry

    return list(log_registry.get_log_qnames())


def torch_log_formatter() -> logging.Formatter:
    """The formatter TORCH_LOGS prints with, so our captured text reads exactly like it."""
    from torch._logging._internal import DEFAULT_FORMATTER

    return DEFAULT_FORMATTER


def trace_logger() -> logging.Logger:
    """The structured-trace logger (what TORCH_TRACE writes and tlparse reads)."""
    from torch._logging._internal import trace_log

    return trace_log


def artifact_of(record: logging.LogRecord) -> str | None:
    """ "graph_breaks" for a record of the graph_breaks artifact logger, etc."""
    name = record.name
    for alias, artifact in ARTIFACT_ALIASES.items():
        if name.endswith(f".__{alias}"):
            return artifact
    for artifact in ARTIFACTS:
        if name.endswith(f".__{artifact}"):
            return artifact
    return None


def trace_string_table() -> list[tuple[str, int]]:
    """The structured trace interns file names once per process; a trace file of one run needs
    the whole table at its top for tlparse to resolve them."""
    try:
        from torch._logging.structured import INTERN_TABLE
    except ImportError:  # pragma: no cover
        return []
    return sorted(INTERN_TABLE.items(), key=lambda kv: kv[1])


def trace_filenames() -> dict[int, str]:
    """Interned id -> file name: the structured trace's user stacks name files by id."""
    return {index: name for name, index in trace_string_table()}
