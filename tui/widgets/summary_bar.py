"""The one-line summary and the header lines: pure functions of the `View`."""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text

from playground.engine.passes import NO_PASSES, Passes
from playground.engine.program import PROGRAM_TOGGLES
from playground.engine.settings import Settings, config_word
from tui.panes.common import BAD, DIM, GOOD, WARN, plural
from tui.run.findings import refusal_words
from tui.run.toggles import TOGGLES, Toggle
from tui.run.view import View

_RUN_STYLES = {"error": BAD, "done": GOOD, "running": WARN, "starting": WARN, "queued": WARN}


#: The separator before the run's state, widest first: at 80 columns the common line
#: (`... speedup unreliable  |  done in 2.1 s`) is two columns too wide with the first.
_SEPARATORS = ("  |  ", " | ")


def summary_text(view: View, width: int | None = None) -> Text:
    """`graphs N  breaks N  recompiles N  equiv ok|FAIL  speedup X.XXx` and the run state.

    Within `width` columns (None: no limit) the separator narrows, `done in 2.1 s` becomes
    `done 2.1 s`, then the counts are single-spaced before anything wraps (a run across ranks
    at 80 columns needs all three); past that it may wrap to a second line (an error on a
    narrow screen) rather than lose the state."""
    forms = [(sep, False, False) for sep in _SEPARATORS] + [
        (_SEPARATORS[-1], True, False),
        (_SEPARATORS[-1], True, True),
    ]
    text = Text()
    for separator, short, tight in forms:
        text = _summary(view, separator, short, tight)
        if width is None or text.cell_len <= width:
            break
    return text


def _summary(view: View, separator: str, short: bool, tight: bool = False) -> Text:
    text = Text()
    if view.report is None:
        text.append("no result yet", style=DIM)
    else:
        if view.stale:
            text.append("STALE ", style=f"{WARN} reverse")
            text.append(" ")
        # A refusal under fullgraph=True is the result: its words, not counts of nothing compiled.
        refusal = refusal_words(view.report, width=40)
        if view.toggle_target and view.report.kind == "program":
            text.append(f"{view.toggle_target}: ", style=f"bold {WARN}")  # the panes show it alone
        if view.report.world_size is not None:
            # Which rank the panes show, and whether the ranks differ: the finding of the run.
            rank = view.shown_rank or 0
            differ = bool(view.report.divergence)
            words = f"r{rank}/{view.report.world_size}" if short else f"rank {rank} of {view.report.world_size}"
            # In words, not a sign: a projector's audience reads "differ" where "≠" was missed.
            text.append(f"{words}{' ranks differ' if differ else ''} ", style=f"bold {WARN}" if differ else "bold")
        line = view.report.summary_line().replace("  ", " ") if tight else view.report.summary_line()
        text.append(refusal or line, style=DIM if view.stale else (BAD if refusal else ""))
    text.append(separator, style=DIM)
    text.append(view.run.words(short=short), style=_RUN_STYLES.get(view.run.kind, ""))
    return text


class FittedSummary:
    """The summary bar as a renderable: `summary_text` at whatever width it is drawn in."""

    def __init__(self, view: View) -> None:
        self.view = view

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield summary_text(self.view, width=options.max_width)


def title_text(view: View) -> Text:
    """Snippet, torch version and device: what a projector audience needs to place the screen."""
    text = Text(no_wrap=True, overflow="ellipsis")
    text.append(view.snippet_name or "(no snippet)", style="bold")
    if view.program:
        text.append(f"  {view.program}", style=f"bold {WARN}")
    version = view.torch_version
    text.append(f"  torch {version}" if version else "  torch: starting…")
    text.append(f"  device {view.settings.device}")
    if view.hello is not None:
        cuda = "cuda available" if view.hello.cuda_available else "no cuda"
        text.append(f" ({cuda})", style=DIM)
    return text


#: (toggle name level, switches without their module), longest first.
_FORMS = ((0, False), (1, False), (1, True), (2, True))


def settings_text(
    settings: Settings,
    used: Settings | None = None,
    width: int | None = None,
    *,
    passes: Passes = NO_PASSES,
    program: ProgramToggles | None = None,
) -> Text:
    """The toggles with their keys, so the screen teaches its own controls, then `k kernels on`
    when the runs profile the kernels and `u what-if on` when they measure the guard what-if
    (`passes`), then torch's own switches when set. Within `width`
    columns (None: no limit) the longest form that fits: shorter toggle names first, then switch
    names without their module, then `+N switches:`; whatever is still cut ends in an ellipsis,
    so a cut is never silent. For a `program`, a toggle not pressed reads "as written": the
    program's own torch.compile argument holds."""
    text = Text()
    # Shorter forms only when the longer do not fit: a long value alone (`mode reduce-overhead`
    # under Inductor) is enough to push the device past 80 columns.
    for names, short_switches in _FORMS:
        text = _settings_form(
            settings, used, names=names, short_switches=short_switches, passes=passes, program=program
        )
        if width is None or text.cell_len <= width:
            return text
    if settings.switch_words():
        text = _settings_form(
            settings, used, names=2, short_switches=True, counted=True, passes=passes, program=program
        )
    text.truncate(width, overflow="ellipsis")
    return text


def _settings_form(
    settings: Settings,
    used: Settings | None,
    *,
    names: int,
    short_switches: bool,
    counted: bool = False,
    passes: Passes = NO_PASSES,
    program: ProgramToggles | None = None,
) -> Text:
    text = Text(no_wrap=True, overflow="ellipsis")
    # Each toggle of the one table with its key, so the screen teaches its own controls.
    for index, toggle in enumerate(t for t in TOGGLES if not t.when_set):
        if index:
            text.append(" ")  # one space: all five fit 80 columns; the reversed key separates
        _toggle_row(text, toggle, names)
        if program is not None and toggle.name in PROGRAM_TOGGLES and toggle.name not in program.toggled:
            text.append("as written", style=DIM)
        else:
            text.append(toggle.shown(settings, passes) or "", style="bold")
    if program is not None and program.toggled and program.target is not None:
        text.append(" on ")
        text.append(program.target, style="bold")
    # Off by default and said only when on, as torch's switches are: the bar at 80 columns holds
    # the five toggles and little more (k, u and n are in the help and the palette).
    for toggle, value in _when_set(settings, passes):
        text.append(" ")
        _toggle_row(text, toggle, names)
        text.append(value, style="bold")
    if settings.target is not None:
        # Set only by the snippet (SETTINGS["target"]) or --target: which of model and fn ran.
        text.append("  ")
        text.append(settings.target_word(), style="bold")
    # Torch's own switches only when set: the bar teaches the keys, these come from SETTINGS,
    # --config or the palette (ctrl+p "config", "stance").
    words = _switch_words(settings, short=short_switches)
    if counted:
        text.append(f"  +{plural(len(words), 'switch', 'switches')}:", style=WARN)
        text.append(" " + ", ".join(words), style=f"bold {WARN}")
    else:
        for word in words:
            text.append("  ")
            text.append(word, style=f"bold {WARN}")
    if used is not None and _differs(settings, used):
        text.append(f"  (worker used: {_used_words(settings, used, names)})", style=WARN)
    return text


def _used_words(settings: Settings, used: Settings, names: int) -> str:
    """What the worker ran with, where it differs from what the bar asks: the whole label, or
    in the short forms only the words that differ ("device=cpu"), and a word the worker's run
    lacks as "without target=fn" (a run asked with a target the worker's report does not name)."""
    words = used.label().split("  ")
    if not names:
        return "  ".join(words)
    asked = settings.label().split("  ")
    differ = [word for word in words if word not in asked]
    keys = {word.split("=")[0] for word in words}
    differ += [f"without {word}" for word in asked if word.split("=")[0] not in keys]
    return "  ".join(differ) or "other settings"


def _toggle_row(text: Text, toggle: Toggle, names: int) -> None:
    """A toggle's key and its name at level `names` (the shortest form, as `f off`: `k on`)."""
    text.append(toggle.key, style="bold reverse")
    shown = toggle.bar[names]
    text.append(f" {shown} " if shown else " ")


def _when_set(settings: Settings, passes: Passes) -> list[tuple[Toggle, str]]:
    """The toggles named only when set (a pass on, more than one rank), with their values."""
    shown = [(toggle, toggle.shown(settings, passes)) for toggle in TOGGLES if toggle.when_set]
    return [(toggle, value) for toggle, value in shown if value is not None]


def _switch_words(settings: Settings, *, short: bool) -> list[str]:
    """`dynamo.capture_scalar_outputs=True`, or without the module (`capture_scalar_outputs=True`)."""
    if not short:
        return settings.switch_words()
    words = [config_word(key.split(".", 1)[-1], value) for key, value in settings.config]
    return words + settings.switch_words()[len(settings.config) :]


@dataclass(frozen=True)
class ProgramToggles:
    """A program's toggles as the settings bar shows them: which settings replace the program's
    own arguments (the rest read "as written"), and the one callable they act on (None: all)."""

    toggled: tuple[str, ...] = ()
    target: str | None = None


class FittedSettings:
    """The settings bar as a renderable: `settings_text` at whatever width it is drawn in, so a
    resize picks the form that fits without the screen re-rendering it."""

    def __init__(
        self,
        settings: Settings,
        used: Settings | None = None,
        *,
        passes: Passes = NO_PASSES,
        program: ProgramToggles | None = None,
    ) -> None:
        self.settings = settings
        self.used = used
        self.passes = passes
        self.program = program

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield settings_text(self.settings, self.used, width=options.max_width, passes=self.passes, program=self.program)


def _differs(a: Settings, b: Settings) -> bool:
    fields = (
        "fullgraph",
        "dynamic",
        "backend",
        "mode",
        "device",
        "config",
        "stance",
        "error_on_graph_break",
        "target",
        "ranks",
    )
    return any(getattr(a, f) != getattr(b, f) for f in fields)
