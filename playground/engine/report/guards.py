"""The guards of one compiled cache entry, as torch's guards log listed them."""

from __future__ import annotations

from dataclasses import dataclass

from playground.engine.report.wire import Wire


@dataclass(frozen=True)
class GuardSet(Wire):
    """The guards of one compiled cache entry (one frame compile id such as 0/1)."""

    compile_id: str = ""
    function: str = ""
    line: int | None = None
    guards: tuple[str, ...] = ()
