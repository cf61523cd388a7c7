"""The guards of one compiled cache entry, as torch's guards log listed them."""

from __future__ import annotations

from dataclasses import dataclass

from playground.engine.report.wire import Wire, absent_if_empty, wire


@dataclass(frozen=True)
class GuardSet(Wire):
    """The guards of one compiled cache entry (one frame compile id such as 0/1)."""

    compile_id: str = ""
    function: str = ""
    line: int | None = None
    guards: tuple[str, ...] = ()
    #: A digest of what the guards check with the process's own numbers (object addresses,
    #: Dynamo's numbered globals) taken out: equal for two processes' sets that check the same
    #: things. Made where the guards are read (worker/capture/guard_checks.py); "" when unknown.
    checked_as: str = wire("", omit=absent_if_empty("checked_as"))
