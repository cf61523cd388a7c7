"""torch's logging: the artifact loggers we capture, their formatter, and the structured trace's
logger and interned file names."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch
import torch._logging
import torch._logging._internal

#: torch's own set_logs, as imported: ours call it even while a run's code sees the wrapper that
#: keeps our capture through the code's own calls (keep_capture_through_set_logs).
_TORCH_SET_LOGS = torch._logging.set_logs

#: The artifact loggers are named "<module>.__<artifact>"; these suffixes pick them out.
ARTIFACTS = ("graph_breaks", "recompiles", "guards")


#: Artifacts logged under another name that count as one of ARTIFACTS: with recompiles_verbose on,
#: torch logs every recompile to `__recompiles_verbose` instead of `__recompiles` (guards.py).
ARTIFACT_ALIASES = {"recompiles_verbose": "recompiles"}


#: The variable whose presence makes torch's set_logs a no-op (it warns and returns).
LOG_ENV = "TORCH_LOGS"

#: What `_init_logs` reads besides TORCH_LOGS to send the structured trace to a folder: the
#: playground's own trace is `--trace DIR`, and every process of a run would write one there.
_TRACE_ENV = ("TORCH_TRACE", "TORCH_DTRACE", "TORCH_COMPILE_DEBUG")


def enable_artifact_logs() -> None:
    """What TORCH_LOGS=graph_breaks,recompiles_verbose,guards turns on, plus the dynamo warnings
    (recompile_limit) at their default level. recompiles_verbose lists the failing guard of every
    cache entry (with its user stack), where plain recompiles stops at the first entry's."""
    _set_logs_over_env(graph_breaks=True, recompiles=True, recompiles_verbose=True, guards=True)


def _set_logs_over_env(**kwargs: Any) -> None:
    """torch's set_logs for our own settings, even under a TORCH_LOGS in the user's environment:
    there set_logs only warns and returns, and a `TORCH_LOGS=graph_breaks` user's every
    recompile went uncounted (measured on 2.13: 0 recompiles reported where torch made 2)."""
    saved = os.environ.pop(LOG_ENV, None)
    try:
        _TORCH_SET_LOGS(**kwargs)
    finally:
        if saved is not None:
            os.environ[LOG_ENV] = saved


def apply_env_logs(
    handler: logging.Handler, trace_handler: logging.Handler, printed: logging.Filter | None = None
) -> None:
    """The user's TORCH_LOGS as torch's import applies it in a plain process (its levels, its
    stderr handlers: a run's code prints what it prints under python), our capture joined
    again after it; nothing where TORCH_LOGS is not set. Not its trace variables (`_TRACE_ENV`)."""
    if LOG_ENV not in os.environ:
        return
    saved = {name: os.environ.pop(name) for name in _TRACE_ENV if name in os.environ}
    # torch caches the parsed setting, and the cached object is the live log state that set_logs
    # then changed in place (ours among them): parsed again, it is the user's setting alone.
    parse = torch._logging._internal._parse_log_settings
    if hasattr(parse, "cache_clear"):
        parse.cache_clear()
    init = getattr(torch._logging._internal, "_init_logs", None)  # a later torch may name it otherwise
    try:
        if init is not None:
            init()
    finally:
        os.environ.update(saved)
    _rejoin(handler, trace_handler, printed)


#: The artifacts enable_artifact_logs turns on, by torch's names.
_OURS = ("graph_breaks", "recompiles", "recompiles_verbose", "guards")


@contextmanager
def keep_capture_through_set_logs(
    handler: logging.Handler,
    trace_handler: logging.Handler,
    *,
    env_logs: bool = False,
    printed: logging.Filter | None = None,
) -> Iterator[None]:
    """While a run's code runs, its own `torch._logging.set_logs(...)` (a program's, a recipe's)
    does what it does under python (its settings, its stderr handlers, its warning under
    TORCH_LOGS) and then our capture joins again. Measured on 2.13: set_logs clears every torch
    logger's handlers and the structured trace's, and `set_logs(graph_breaks=False)` turns the
    artifact off in torch's log state, which Dynamo reads before it logs a recompile: a program
    with two breaks and two recompiles was reported with none. `env_logs`: the user's TORCH_LOGS
    applied first (apply_env_logs), as a plain process has it before the code runs. `printed`:
    a filter put on each handler torch's set_logs makes (what prints to stderr)."""

    def set_logs(*args: Any, **kwargs: Any) -> None:
        _TORCH_SET_LOGS(*args, **kwargs)
        _rejoin(handler, trace_handler, printed)

    set_logs.__doc__ = _TORCH_SET_LOGS.__doc__
    if env_logs:
        apply_env_logs(handler, trace_handler, printed)
    saved = torch._logging.set_logs, torch._logging._internal.set_logs
    torch._logging.set_logs = torch._logging._internal.set_logs = set_logs
    try:
        yield
    finally:
        torch._logging.set_logs, torch._logging._internal.set_logs = saved


def _rejoin(handler: logging.Handler, trace_handler: logging.Handler, printed: logging.Filter | None = None) -> None:
    """Our artifacts on in torch's log state and into `handler`, printed only where the code's own
    settings print them: an artifact it did not ask for stops at its own logger (propagate off).
    Every torch logger gets `handler` beside the stream handler set_logs gave it (the dynamo
    warnings, the recompile limit's among them), and the trace logger `trace_handler`. A record
    that reaches `handler` twice on its way up is the handler's to take once."""
    from torch._logging._internal import log_registry, log_state, trace_log

    wanted = {name for name in _OURS if log_state.is_artifact_enabled(name)}
    # Code that asked for `recompiles` alone prints torch's short form: with recompiles_verbose on,
    # torch would log the long form instead, to a logger the code did not ask for.
    ours = [name for name in _OURS if not (name == "recompiles_verbose" and "recompiles" in wanted - {name})]
    # Whether torch, as just configured, prints each artifact's records: asked for by name, or
    # under a parent logger at DEBUG (`TORCH_LOGS=+dynamo` prints the breaks and guards without
    # naming them). Read before our levels change it.
    printed_now = {
        qname: logging.getLogger(qname).propagate and logging.getLogger(qname).getEffectiveLevel() <= logging.DEBUG
        for qname in log_registry.get_artifact_log_qnames()
    }
    for name in ours:
        log_state.enable_artifact(name)
    for qname in log_registry.get_log_qnames():
        logger = logging.getLogger(qname)
        if handler not in logger.handlers:
            logger.addHandler(handler)
        for other in logger.handlers:
            if printed is not None and other is not handler and printed not in other.filters:
                other.addFilter(printed)
    for qname in log_registry.get_artifact_log_qnames():
        logger = logging.getLogger(qname)
        name = getattr(logger, "artifact_name", None)
        if name in ours:
            logger.setLevel(logging.DEBUG)
            logger.propagate = printed_now[qname]
            if handler not in logger.handlers:
                logger.addHandler(handler)
    trace_log.setLevel(logging.DEBUG)
    if trace_handler not in trace_log.handlers:
        trace_log.addHandler(trace_handler)


@contextmanager
def artifact_logs_off() -> Iterator[None]:
    """torch's logs at their defaults for a while, then ours again: with the guards artifact on,
    Dynamo hands a guard filter every value guard twice (measured on 2.13 and 2.14: 267 entries
    where a plain program's filter gets 139; the guard tree is the same)."""
    _set_logs_over_env()
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


def log_torch_version() -> None:
    """The torch_version artifact a TORCH_TRACE file opens with (torch logs it once per process,
    when its handler opens the file: in the worker, before any run's trace)."""
    log = getattr(torch._logging._internal, "_log_torch_version", None)
    if log is not None:
        log()


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
