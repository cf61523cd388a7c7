"""What a run's trace met, recorded in the run's child for its template (process/trace_warmup.py,
which warms it for the next run), and the child's check that what the template warmed is still
current. Worker-side.

The child writes, at the end of its run, the files in Dynamo's funcname_cache and the modules new
in sys.modules since the run began (names only: the template judges them) into a small JSON file
in the worker's temporary folder, named for the template and the run (`Recorder`). funcname_cache
never checks a file's time: an entry the template made for a file that changed since would name
the lines of its old version, so the child drops such entries before it traces (`drop_stale`).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import tempfile
from typing import Any

from playground.worker.compat import CONFIG_MODULES
from playground.worker.compat.funcname_cache import funcname_cache

#: COMPILE_PLAYGROUND_TRACE_WARMUP=0 turns the trace's warm-up off.
SWITCH_ENV = "COMPILE_PLAYGROUND_TRACE_WARMUP"
#: A file the template appends one JSON line to per warm-up (what it warmed, in how long): for
#: the benchmarks and tests, never needed by a user.
LOG_ENV = "COMPILE_PLAYGROUND_TRACE_WARMUP_LOG"

#: In the template: funcname_cache's files this process tokenized ahead, each with its (size,
#: mtime_ns) then. A run's child inherits it and drops an entry whose file changed since.
TOKENIZED: dict[str, tuple[int, int]] = {}


def enabled() -> bool:
    return os.environ.get(SWITCH_ENV, "1") != "0"


def met_path(template_pid: int, run_id: Any) -> str:
    """Where the run `run_id` of the template `template_pid` writes what its trace met: the
    worker's temporary folder (a folder of its own, removed with the worker)."""
    digest = hashlib.sha256(json.dumps(run_id, sort_keys=True, default=repr).encode()).hexdigest()[:20]
    return os.path.join(tempfile.gettempdir(), f"compile-playground-met-{template_pid}-{digest}.json")


class Recorder:
    """In a run's child: sys.modules as the run begins, and, at its end, what the trace met
    written for the template (`write`). Cheap: the names only; the template judges them."""

    def __init__(self, request: Any) -> None:
        # A one-shot run, a rank of a run across ranks, the warm-up and a run in the template
        # itself (no isolation) record nothing: no template reads what they met.
        self.wanted = (
            enabled()
            and not request.warmup
            and not request.run.last
            and request.rank is None
            and os.environ.get("COMPILE_PLAYGROUND_ISOLATION", "fork") != "none"
        )
        self.before: set[str] = set(sys.modules) if self.wanted else set()
        # Named now, before the snippet runs (it may change TMPDIR or tempfile.tempdir).
        self.path = met_path(os.getppid(), request.id) if self.wanted else ""
        # A module may read torch's config when it is imported (torch._functorch.partitioners,
        # Inductor's decompose_mem_bound_mm do): imported during a run whose config was not the
        # template's, it holds what the template's import would not. Such a run's modules are
        # left to the runs; its files are not (tokenizing reads no config).
        settings = request.run.settings
        self.config_as_template = not settings.config and settings.mode in (None, "default")
        self.config = config_digest() if self.wanted else ""
        drop_stale()

    def write(self) -> None:
        """What the run met into met_path; never raises (a failure only costs the next run
        its warm-up)."""
        if not self.wanted:
            return
        try:
            modules = {}
            same_config = self.config_as_template and config_digest() == self.config
            for name in set(sys.modules) - self.before if same_config else ():
                file = getattr(sys.modules.get(name), "__file__", None)
                if isinstance(file, str):
                    modules[name] = file
            cache = funcname_cache() or {}
            data = json.dumps({"modules": modules, "files": sorted(k for k in cache if isinstance(k, str))})
            with open(self.path + ".part", "w") as fh:
                fh.write(data)
            os.replace(self.path + ".part", self.path)
        except Exception:  # noqa: BLE001, S110 - a courtesy to the next run, never the run's failure
            pass


def config_digest() -> str:
    """A digest of Dynamo's, Inductor's, functorch's and FX's config as they are now (those
    imported)."""
    parts = []
    for name in sorted({*CONFIG_MODULES.values(), "torch._functorch.config", "torch.fx.experimental._config"}):
        module = sys.modules.get(name)
        copy = getattr(module, "get_config_copy", None)
        if copy is not None:
            parts.append((name, sorted((key, repr(value)) for key, value in copy().items())))
    return hashlib.sha256(repr(parts).encode()).hexdigest()


def drop_stale() -> None:
    """Forget funcname_cache's entry of every file the template tokenized that changed since
    (its size or modification time): in a run's child before it traces, so that the trace
    tokenizes it again, as a fresh process would; in the template before it warms, so that it
    tokenizes the new version for the next runs."""
    cache = funcname_cache()
    if cache is None:
        return
    for file, seen in list(TOKENIZED.items()):
        if signature(file) != seen:
            cache.pop(file, None)
            del TOKENIZED[file]


def signature(file: str) -> tuple[int, int] | None:
    try:
        st = os.stat(file)
    except OSError:
        return None
    return st.st_size, st.st_mtime_ns
