"""Textual's `notify`, made safe for text we did not write, for both apps (the playground and
the follower): toasts quote file names and exception messages, so control characters are made
visible, and markup is off unless asked for (a `[/]` in an error would otherwise raise, and
`[b]` vanish)."""

from __future__ import annotations

from typing import TypeVar

from textual.app import App
from textual.notifications import SeverityLevel

from playground.engine.textsafe import visible

Result = TypeVar("Result")


class SafeNotify(App[Result]):
    """An app whose `notify` shows any text as it is. Subclass it instead of `App`."""

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        super().notify(visible(message), title=visible(title), severity=severity, timeout=timeout, markup=markup)
