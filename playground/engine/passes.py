"""The passes a run makes after its own measurements, each only when asked for: one frozen
value from the command line's flags (or the app's keys) to the client's run options.

Each costs a run's worth of time or more (a profiler pass and a recompile with provenance, a
second child under depyf, a recompile under a guard filter), so none runs by default. A new
pass is a field here, its flag (playground/cli/flags.py), its key (tui/keys.py) and the
worker's pass; everything between carries this value whole. Torch-free.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace


@dataclass(frozen=True)
class Passes:
    kernels: bool = False
    """Inductor's kernels profiled after the timing (--kernels, key k)."""
    dynamo_code: bool = False
    """The code Dynamo wrote, decompiled by depyf in a second child (--code; opening the Code
    pane asks for it from then on)."""
    guard_what_if: bool = False
    """What torch's guard filters and skip_guard_eval_unsafe would save the timed call
    (--guard-what-if, key u)."""

    def toggled(self, name: str) -> Passes:
        return replace(self, **{name: not getattr(self, name)})

    def asked(self) -> dict[str, bool]:
        """The client's run options for the passes asked for; those not asked keep the
        client's default (off)."""
        return {f.name: True for f in fields(self) if getattr(self, f.name)}


#: None asked: the default everywhere (a frozen value, so one is shared).
NO_PASSES = Passes()
