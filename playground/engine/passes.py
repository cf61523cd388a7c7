"""The passes a run makes after its own measurements, each only when asked for: one frozen
value from the command line's flags (or the app's keys) to the worker.

Each costs a run's worth of time or more (a profiler pass and a recompile with provenance, a
second child under depyf, a recompile under a guard filter), so none runs by default. A new
pass is a field here, its flag (playground/cli/flags.py), its key (tui/keys/table.py) and the
worker's pass; everything between carries this value whole, inside the run's request
(playground/engine/run_request.py), whose wire spells each pass by its field's name. Torch-free.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from playground.engine.report import Wire


@dataclass(frozen=True)
class Passes(Wire):
    kernels: bool = False
    """Inductor's kernels profiled after the timing (--kernels, key k)."""
    dynamo_code: bool = False
    """The code Dynamo wrote, decompiled by depyf in a second child (--code; opening the Code
    pane asks for it from then on)."""
    guard_what_if: bool = False
    """What torch's guard filters and skip_guard_eval_unsafe would save the timed call
    (--guard-what-if, key u)."""

    fixes: str = ""
    """Fixes tried after the run (--try-fixes, the app's key on the Breaks and Recomp panes):
    "" none, "all" every break site and recompiling function, or one target as "break:LINE" or
    "recompile:LINE" (playground/worker/run/fixes/)."""

    def toggled(self, name: str) -> Passes:
        return replace(self, **{name: not getattr(self, name)})


#: None asked: the default everywhere (a frozen value, so one is shared).
NO_PASSES = Passes()
