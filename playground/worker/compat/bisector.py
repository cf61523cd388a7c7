"""torch's compiler bisector (torch._inductor.compiler_bisector.CompilerBisector), private.

`do_bisect(fn)` runs in process; its state files live under `in_process_cache/bisect`, so each
bisection points it at a private temp dir (a leftover status in the shared cache dir would
override the backends)."""

from __future__ import annotations

import contextlib
import io
from collections.abc import Callable
from typing import Any


def _bisector() -> Any:
    from torch._inductor.compiler_bisector import CompilerBisector

    return CompilerBisector


def bisect_in(state_dir: str, fn: Callable[[], bool]) -> dict[str, Any] | None:
    """do_bisect(fn) with its state under `state_dir`; the bisector's prints go to a buffer,
    never to our JSON channel. The result as a plain dict, or None when nothing failed."""
    cb = _bisector()
    cb.in_process_cache = state_dir
    with contextlib.redirect_stdout(io.StringIO()):
        result = cb.do_bisect(fn)
    if result is None:
        return None
    return {
        "backend": result.backend,
        "subsystem": result.subsystem,
        "bisect_number": result.bisect_number,
        "debug_info": result.debug_info,
    }


def bisect_progress() -> dict[str, Any]:
    """Where the running bisection is: backend, subsystem, its run state ("test_disable",
    "find_max_bounds", "bisect"; None while it tests whole backends) and the range left."""
    cb = _bisector()
    backend = cb.get_backend()
    subsystem = cb.get_subsystem()
    low = high = state = change = None
    if backend and subsystem:
        with contextlib.suppress(Exception):
            state = cb.get_run_state(backend, subsystem)
        with contextlib.suppress(Exception):
            low, high = cb.get_bisect_range(backend, subsystem)
        with contextlib.suppress(Exception):
            found = cb.get_subsystem_object(backend, subsystem)
            if hasattr(found, "config_field"):  # a ConfigChange: one switch set, not a pass off
                change = f"{found.config_name}.{found.config_field}={found.config_value}"
    return {"stage": backend, "subsystem": subsystem, "state": state, "change": change, "low": low, "high": high}


def bisect_status_file() -> str:
    """The file where the running bisection keeps its backend and subsystem: gone while a
    bisection runs means its state was removed under it (every later step would run plain
    Inductor and be blamed on the backend it stood at)."""
    import os

    return os.path.join(_bisector().get_dir(), "bisect_status.txt")
