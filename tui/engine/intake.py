"""Where the engine's values enter the UI: made safe for the terminal once, turned into messages.

Text from the snippet or from torch is untrusted input to the terminal (an ESC in it is a
command). It enters the UI only here: engine events (`event_message`), the finished report
(`visible_report`), the file's text (`source_text`) and worker failures (`error_report`); each
escapes control characters once, so every pane and bar reads safe text and a new pane cannot
forget to. Notifications escape in `PlaygroundApp.notify`.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, TypeVar

from textual.message import Message

from playground.engine import events
from playground.engine.caps import DEFAULT_LIMIT, LIMITS, cap
from playground.engine.report import Report, RunError
from playground.engine.settings import Settings
from playground.engine.textsafe import visible
from tui.engine.messages import DiagnosticsReady, FindingsReady, Progress, WorkerRestarted

T = TypeVar("T")


def visible_value(value: T, key: str = "") -> T:
    """`value` (a report or any part of one) with `visible` applied to every string in it, each
    first cut to the limit of the field that holds it (`playground.engine.caps`: whatever engine
    sent it, no pane is handed more).

    Frozen values are rebuilt only where a string changed, so a clean report comes back as the
    very same object."""
    result: Any = value
    if isinstance(value, str):
        result = visible(cap(value, LIMITS.get(key, DEFAULT_LIMIT)))
    elif isinstance(value, tuple):
        items = tuple(visible_value(item, f"{key}[]") for item in value)
        if any(new is not old for new, old in zip(items, value, strict=True)):
            result = items
    elif isinstance(value, Mapping):
        pairs = [(visible_value(name), visible_value(item, str(name))) for name, item in value.items()]
        if any(k is not name or v is not value[name] for (k, v), name in zip(pairs, value, strict=True)):
            result = MappingProxyType(dict(pairs))
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        changed = {}
        for field in dataclasses.fields(value):
            old = getattr(value, field.name)
            new = visible_value(old, field.name)
            if field.init and new is not old:
                changed[field.name] = new
        if changed:
            result = dataclasses.replace(value, **changed)
    return result


def visible_report(report: Report) -> Report:
    """The engine's report as the panes read it: control characters made visible."""
    return visible_value(report)


def source_text(data: bytes) -> str:
    """The snippet's bytes as the Source pane shows them: a UTF-8 BOM dropped (Notepad writes
    one; Python ignores it), then as `shown_text`."""
    return shown_text(data.decode("utf-8-sig", errors="replace"))


def shown_text(text: str) -> str:
    """Decoded snippet text as the Source pane shows it: lines split where Python splits them
    (a lone CR too, so the line numbers match torch's), control characters made visible."""
    return visible(text.replace("\r\n", "\n").replace("\r", "\n"))


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def event_message(generation: int, event: events.RunEvent) -> Message | None:
    """The app's message for one engine event of the run `generation`; None for kinds this UI
    does not show."""
    if isinstance(event, events.ProgressEvent):
        return Progress(generation, visible(event.step), event.call, event.calls, visible(event.message))
    if isinstance(event, events.DiagnosticsEvent):
        return DiagnosticsReady(generation, visible_report(event.report))
    if isinstance(event, events.FindingsEvent):
        return FindingsReady(generation, visible_report(event.report))
    if isinstance(event, events.RestartEvent):
        return WorkerRestarted(generation, visible(event.reason))
    return None


def error_report(kind: str, type_: str, message: str, settings: Settings) -> Report:
    """A report holding only an error, for failures that produced no report at all."""
    return Report(settings=settings, error=RunError(kind=kind, type=visible(type_), message=visible(message)))
