"""What a run's trace met, warmed in the template for the next run. Worker-side.

The first trace in any process pays for state a process keeps after it (docs/performance.md,
"The first trace in a process"): Dynamo's funcname_cache tokenizes every source file the trace
meets to name the function on a line, once per process (0.2-0.3 s for a `transformers` Llama's
modeling files here), and the trace imports modules lazily (an Inductor compile: sympy's units,
parts of torch._inductor). A run's child is forked from a template that never traced, so every
run paid both, where torch's floor (a warm process) pays neither. Neither the tokenizing nor the
imports run a torch op, so the template can do both between runs without the hazard of forking
after a parallel op (../shared/TORCH_NOTES.md).

The run's child writes, at the end of its run, what its trace met (run/spine/trace_met.py): the files
in funcname_cache and the modules new in sys.modules since the run began, into a small JSON file
in the worker's temporary folder named for the template and the run. After the run, the template
(preimport.after_run, before it forks the next spare child) reads it (`read`), keeps only what
is torch's or an installed package's (never the snippet's folder, its helpers, an editable
checkout, Inductor's generated modules: what the user edits must be read afresh by each run), and
imports those modules under preimport's state checks, then fills funcname_cache for those files
by calling torch's own function, so the cache holds exactly what the trace would compute.

funcname_cache never checks a file's time: an entry for a file that changed would name the lines
of its old version. So the template records each file's size and modification time as it
tokenizes it, and each run's child drops the entry of a file that changed since
(trace_met.drop_stale), before it traces: it then tokenizes that file itself, as a fresh process
would; the template drops it too before it warms again, and tokenizes the new version.

COMPILE_PLAYGROUND_TRACE_WARMUP=0 turns this off (benchmarks/models_latency.py's comparison);
COMPILE_PLAYGROUND_PREIMPORT=0 turns it off with the rest of preimport.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from playground.worker.compat.funcname_cache import funcname_cache, tokenize_file
from playground.worker.run.spine.trace_met import LOG_ENV, TOKENIZED, drop_stale, enabled, met_path, signature

__all__ = ["LOG_ENV", "TOKENIZED", "Met", "drop_stale", "enabled", "log", "met_path", "read", "tokenize"]

#: At most this many modules and files read from one run's file (a snippet can write it).
MAX_MODULES = 4000
MAX_FILES = 1000
MAX_BYTES = 1 << 20


@dataclass(frozen=True)
class Met:
    """What a run's trace met that the template may warm: modules to import (name, file) and
    files to tokenize, each torch's or an installed package's."""

    modules: tuple[str, ...] = ()
    files: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.modules or self.files)


def read(run_id: Any, snippet_path: str, skip: set[str], installed: Callable[[str, str], bool]) -> Met:
    """What the run `run_id` of this template met (its file removed), filtered: a module whose
    top-level package is torch or `installed` (preimport.installed: a site-packages package the
    snippet's folder does not shadow), not in `skip`, not yet imported here, whose file the
    template would load too; a file in funcname_cache that lies in torch or a site-packages
    folder, outside the snippet's folder, not yet tokenized here."""
    drop_stale()
    path = met_path(os.getpid(), run_id)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_BYTES + 1)
    except OSError:
        return Met()
    finally:
        try:
            os.unlink(path)
        except OSError:
            pass
    if len(raw) > MAX_BYTES:
        return Met()
    try:
        data = json.loads(raw)
    except ValueError:
        return Met()
    if not isinstance(data, dict):
        return Met()
    folder = os.path.realpath(os.path.dirname(os.path.abspath(snippet_path)))
    return Met(
        modules=_modules(data.get("modules"), folder, skip, installed),
        files=_files(data.get("files"), folder),
    )


def _torch_root() -> str:
    import torch

    return os.path.realpath(os.path.dirname(torch.__file__))


def _ours(real: str, folder: str) -> bool:
    """Whether the file `real` (a real path) is torch's or an installed package's: in torch's
    folder or a site-packages folder, and not the snippet's or its helpers' (below the snippet's
    folder only inside a site-packages folder there: a project's own virtual environment)."""
    if not real.endswith(".py"):
        return False
    if real.startswith(folder + os.sep):
        below = real[len(folder) + 1 :].split(os.sep)
        return "site-packages" in below[:-1] or "dist-packages" in below[:-1]
    parts = real.split(os.sep)
    return real.startswith(_torch_root() + os.sep) or "site-packages" in parts or "dist-packages" in parts


def _modules(found: Any, folder: str, skip: set[str], installed: Callable[[str, str], bool]) -> tuple[str, ...]:
    if not isinstance(found, dict) or len(found) > MAX_MODULES:
        return ()
    snippet_dir = os.path.dirname(folder + os.sep)
    tops: dict[str, bool] = {}
    out = []
    for name, file in found.items():
        if not isinstance(name, str) or not isinstance(file, str) or name in sys.modules:
            continue
        if not all(part.isidentifier() for part in name.split(".")):
            continue
        top = name.split(".")[0]
        if top not in tops:
            tops[top] = top not in skip and (top == "torch" or installed(top, snippet_dir))
        if not tops[top] or not _ours(os.path.realpath(file), folder):
            continue
        if not _same_package(top, file):
            continue
        out.append(name)
    # Parents first: importing `a.b.c` imports `a.b`, and the list reads as the import order.
    return tuple(sorted(out, key=lambda n: (n.count("."), n)))


def _same_package(top: str, file: str) -> bool:
    """Whether the child's module `file` comes from the copy of its top-level package that this
    process has (or would import): a snippet that put another copy first on sys.path (an
    editable checkout) imported that one, which the template must never import in its place."""
    package = sys.modules.get(top)
    origin = getattr(package, "__file__", None) if package is not None else None
    if origin is None:
        import importlib.util

        try:
            spec = importlib.util.find_spec(top)
        except (ImportError, ValueError):
            return False
        origin = getattr(spec, "origin", None)
    if not isinstance(origin, str):
        return False
    root = os.path.realpath(os.path.dirname(origin))
    return os.path.realpath(file).startswith(root + os.sep)


def _files(found: Any, folder: str) -> tuple[str, ...]:
    if not isinstance(found, list) or len(found) > MAX_FILES:
        return ()
    cache = funcname_cache()
    if cache is None:
        return ()
    out = []
    for file in found:
        if not isinstance(file, str) or file in cache or not os.path.isabs(file):
            continue
        if _ours(os.path.realpath(file), folder) and os.path.isfile(file):
            out.append(file)
    return tuple(out)


def tokenize(files: tuple[str, ...]) -> None:
    """funcname_cache filled for `files` by torch's own function (no torch op, no thread), each
    file's size and time noted for the children's drop_stale."""
    for file in files:
        seen = signature(file)
        if seen is None or not tokenize_file(file):
            continue
        if signature(file) == seen:
            TOKENIZED[file] = seen
        else:  # it changed while we read it: let each run read it itself
            cache = funcname_cache()
            if cache is not None:
                cache.pop(file, None)


def log(met: Met, seconds: float) -> None:
    """One line about this warm-up in LOG_ENV's file, when it is set."""
    path = os.environ.get(LOG_ENV)
    if not path:
        return
    line = {"pid": os.getpid(), "modules": list(met.modules), "files": list(met.files), "seconds": round(seconds, 4)}
    try:
        with open(path, "a") as fh:
            fh.write(json.dumps(line) + "\n")
    except OSError:
        pass
