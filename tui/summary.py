"""The one-line summary and the header lines: pure functions of the `View`."""

from __future__ import annotations

from rich.text import Text

from playground.engine.settings import Settings, dynamic_name
from tui.findings import refusal_words
from tui.panes.common import BAD, DIM, GOOD, WARN
from tui.state import View

_RUN_STYLES = {"error": BAD, "done": GOOD, "running": WARN, "starting": WARN, "queued": WARN}


def summary_text(view: View) -> Text:
    """`graphs N  breaks N  recompiles N  equiv ok|FAIL  speedup X.XXx` and the run state.

    It may wrap to a second line (an error on a narrow screen) rather than lose the state."""
    text = Text()
    if view.report is None:
        text.append("no result yet", style=DIM)
    else:
        if view.stale:
            text.append("STALE ", style=f"{WARN} reverse")
            text.append(" ")
        # A refusal under fullgraph=True is the result: its words, not counts of nothing compiled.
        refusal = refusal_words(view.report, width=40)
        text.append(refusal or view.report.summary_line(), style=DIM if view.stale else (BAD if refusal else ""))
    text.append("  |  ", style=DIM)
    text.append(view.run.words(), style=_RUN_STYLES.get(view.run.kind, ""))
    return text


def title_text(view: View) -> Text:
    """Snippet, torch version and device: what a projector audience needs to place the screen."""
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(view.snippet_name or "(no snippet)", style="bold")
    version = view.torch_version
    text.append(f"  torch {version}" if version else "  torch: starting…")
    text.append(f"  device {view.settings.device}")
    if view.hello is not None:
        cuda = "cuda available" if view.hello.get("cuda_available") else "no cuda"
        text.append(f" ({cuda})", style=DIM)
    return text


def settings_text(settings: Settings, used: Settings | None = None) -> Text:
    """The toggles with their keys, so the screen teaches its own controls."""
    text = Text(no_wrap=True, overflow="ellipsis")
    items = (
        ("f", "fullgraph", "on" if settings.fullgraph else "off"),
        ("d", "dynamic", dynamic_name(settings.dynamic)),
        ("b", "backend", settings.backend),
        ("m", "mode", settings.mode or "default"),
        ("c", "device", settings.device),
    )
    for index, (key, name, value) in enumerate(items):
        if index:
            text.append(" ")  # one space: all five fit 80 columns; the reversed key separates
        text.append(f"{key}", style="bold reverse")
        text.append(f" {name} ")
        text.append(value, style="bold")
    # Torch's own switches only when set: the bar teaches the keys, these come from SETTINGS,
    # --config or the palette (ctrl+p "config", "stance").
    for word in settings.switch_words():
        text.append("  ")
        text.append(word, style=f"bold {WARN}")
    if used is not None and _differs(settings, used):
        text.append(f"  (worker used: {used.label()})", style=WARN)
    return text


def _differs(a: Settings, b: Settings) -> bool:
    fields = ("fullgraph", "dynamic", "backend", "mode", "device", "config", "stance", "error_on_graph_break")
    return any(getattr(a, f) != getattr(b, f) for f in fields)
