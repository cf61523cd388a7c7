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
    """Where the running bisection is: backend, subsystem, its run state and range left."""
    cb = _bisector()
    backend = cb.get_backend()
    subsystem = cb.get_subsystem()
    low = high = None
    if backend and subsystem:
        with contextlib.suppress(Exception):
            low, high = cb.get_bisect_range(backend, subsystem)
    return {"stage": backend, "subsystem": subsystem, "low": low, "high": high}
