"""Every key of the app in one table: the bindings, the footer, the help screen, the command
palette and the README's key table are all built from it, so they cannot disagree.

A toggle key is made from its row of the toggles' table (`tui/run/toggles.py`): its action is
`toggle('NAME')`, the pipeline's one `toggle` verb. The palette runs the same action string as
the key, so both reach the run by one route."""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding

from tui.run.toggles import TOGGLES

#: The panes, in tab order; key n shows the n-th.
PANES: tuple[tuple[str, str], ...] = (
    ("source", "Source"),
    ("breaks", "Breaks"),
    ("graphs", "Graphs"),
    ("guards", "Guards"),
    ("recompiles", "Recomp"),
    ("equivalence", "Equiv"),
    ("timings", "Timing"),
    ("logs", "Logs"),
    ("output", "Output"),
    ("dynamo_code", "Code"),
)

#: Tab labels where the full ones do not fit (all ten tabs at 80 columns): whole words where
#: they are short already, so only three change.
SHORT_TITLES: dict[str, str] = {"source": "Src", "timings": "Time", "output": "Out"}

#: What each pane means, for the help screen.
PANE_HELP: dict[str, str] = {
    "source": "the snippet; B marks a graph-break line, R a recompiled function, E an error, "
    "K a line whose ops a profiled kernel holds, G a line that made guards, with the reason on "
    "the row below",
    "breaks": "each distinct graph-break site: reason, torch's hints, line, how often it fired",
    "graphs": "the FX graphs handed to the backend, one shown at a time ([ and ] pick it) with "
    "Inductor's generated code for it: a break ends one graph and starts the next",
    "guards": "per compiled entry, the checks it runs before reuse, grouped by the snippet line "
    "that made them (argument guards without a line next, torch's internal ones folded into a "
    "count), under any shape specializations and symbols; with only torch's raw guard list, "
    "FAILED marks the one a later call broke",
    "recompiles": "a table with a row per recompile and argument: the call, the entry it made, "
    "the argument, what the failed entry holds (was) and what arrived (now), the line; then which "
    "entry ran each call; when recompile_limit made Dynamo fall back to eager, a short banner on top",
    "equivalence": "eager against compiled: values and gradients, max abs/rel diff, pass or FAIL against the tolerance",
    "timings": "cold compile (and cache hits), eager vs compiled steady state with spread, "
    "speedup beside graph and break counts",
    "logs": "the raw graph_breaks, recompiles and guards text, as TORCH_LOGS prints it",
    "output": "what the snippet or program printed, and the full error when a run failed",
    "dynamo_code": "the code Dynamo wrote, decompiled by depyf: each frame's transformed code, the "
    "resume function after each graph break (with its line) and the guard functions; opening it "
    "asks the runs for it",
}


@dataclass(frozen=True)
class Key:
    """One key: `label` for the footer, `title` and `help` for the palette and help screen."""

    key: str
    action: str
    label: str
    title: str
    help: str
    id: str
    display: str | None = None
    #: Checked before the focused pane's own keys: the line cursor's arrows, which fall through
    #: to scrolling whenever the app's `check_action` refuses them.
    priority: bool = False

    @property
    def in_footer(self) -> bool:
        return self.id in FOOTER

    def binding(self, footer: tuple[str, ...] | None = None) -> Binding:
        """The Binding; shown in the footer when its id is in `footer` (default: FOOTER)."""
        return Binding(
            self.key,
            self.action,
            self.label,
            show=self.id in (FOOTER if footer is None else footer),
            key_display=self.display,
            priority=self.priority,
            tooltip=self.help,
            id=self.id,
        )

    @property
    def shown_key(self) -> str:
        return self.display or self.key


#: The footer, most used first, by key id: it must fit 80 columns beside `^p palette`
#: (tests/tui/test_tui_footer_keys.py). The settings keys (f d b m c) are spelled out with their
#: keys in the settings bar; they and the rest are behind `?` and ctrl+p.
FOOTER: tuple[str, ...] = ("help", "rerun", "pane-source", "gallery", "edit", "history", "matrix", "quit")

KEYS: tuple[Key, ...] = (
    Key("question_mark", "help", "help", "Help", "every key, and what each pane means", "help", display="?"),
    Key("r", "rerun", "rerun", "Rerun", "reset Dynamo and run the snippet again now", "rerun"),
    Key(
        "e",
        "edit",
        "edit",
        "Edit in $EDITOR",
        "suspend the app, edit the snippet in $VISUAL or $EDITOR, rerun on return",
        "edit",
    ),
    Key(
        "g",
        "gallery",
        "gallery",
        "Open the gallery",
        "pick a bundled snippet; an editable copy opens from the current folder",
        "gallery",
    ),
    Key("q", "quit", "quit", "Quit", "stop the worker and leave", "quit"),
    Key(
        "x",
        "matrix",
        "matrix",
        "Settings matrix",
        "run the snippet under every fullgraph x dynamic x backend (eager, inductor) and fill "
        "a table as each finishes; escape cancels",
        "matrix",
    ),
    Key(
        "h",
        "history",
        "history",
        "Run history",
        "every run of this session; space marks two, enter compares them (numbers and source diff)",
        "history",
    ),
    # The toggles, each a row of tui/run/toggles.py: a key is all a toggle needs here.
    *(Key(t.key, t.action, t.label, t.title, t.help, t.id) for t in TOGGLES),
    Key(
        "o",
        "pick",
        "one callable",
        "One callable",
        "for a program (a file that calls torch.compile itself): which compiled callable the panes "
        "show and the setting keys act on, every one (the totals) or each in turn; the others keep "
        "the program's own arguments. Across ranks: which rank the panes show",
        "toggle-target",
    ),
    Key(
        "F",
        "try_fixes",
        "fixes",
        "Try fixes",
        "on the Breaks or Recomp pane: the remedies torch offers for its sites (the line cursor's, when "
        "it is on one), each a variant run of this save with your file untouched, rows filling in as "
        "each ends: what it removes, values and gradients, prints, speedup; a toggles a config or "
        "dynamic one on the session and reruns; escape cancels",
        "try-fixes",
    ),
    Key(
        "s",
        "bisect",
        "bisect",
        "Bisect a wrong value",
        "when Equiv says FAIL: torch's compiler bisector on the snippet, each step a fresh process "
        "judged by our verdict, live; it names the backend, subsystem, op and line that make compiled "
        "values differ, and a applies its config workaround and reruns; escape cancels",
        "bisect",
    ),
    Key(
        "l",
        "line_cursor",
        "line",
        "Kernels of a line",
        "show a line cursor in Source with the kernels of its line below it (time and share, the "
        "ATen ops they hold, the lines fused with them); ↑ ↓ move it, l again hides it",
        "line-kernels",
    ),
    Key(
        "up",
        "move_line(-1)",
        "line up",
        "Line cursor up",
        "the line above, while the line cursor's Source pane has the focus (else the arrow scrolls as usual)",
        "line-up",
        display="↑",
        priority=True,
    ),
    Key(
        "down",
        "move_line(1)",
        "line down",
        "Line cursor down",
        "the line below, while the line cursor's Source pane has the focus (else the arrow scrolls as usual)",
        "line-down",
        display="↓",
        priority=True,
    ),
    Key(
        "t",
        "export_trace",
        "trace",
        "Export trace for tlparse",
        "rerun with torch's structured trace on and write it to ./compile-playground-trace/",
        "trace",
    ),
    Key(
        "w",
        "export_markdown",
        "report.md",
        "Write Markdown report",
        "write the shown run as ./<snippet>-report.md (never overwritten: -2, -3… added)",
        "markdown",
    ),
    Key(
        "left_square_bracket",
        "step_graph(-1)",
        "graph",
        "Previous graph",
        "show the previous captured FX graph (and its generated code) in the Graphs pane",
        "graph-previous",
        display="[",
    ),
    Key(
        "right_square_bracket",
        "step_graph(1)",
        "graph",
        "Next graph",
        "show the next captured FX graph (and its generated code) in the Graphs pane",
        "graph-next",
        display="]",
    ),
) + tuple(
    Key(
        str(number % 10),  # the tenth pane is on key 0
        f"show_pane('{pane}')",
        "panes" if number == 1 else title,
        f"Show {title}",
        f"show the {title} pane: {PANE_HELP[pane]}",
        f"pane-{pane}",
        # One footer entry (pane-source) stands for all of them; the help screen lists each.
        display=(f"1-{len(PANES)}" if len(PANES) < 10 else "0-9") if number == 1 else None,
    )
    for number, (pane, title) in enumerate(PANES, start=1)
)

#: The app's bindings: the footer's keys first, in FOOTER's order (the footer shows them in
#: binding order), then the rest as the table lists them.
BINDINGS: list[Binding] = [
    key.binding() for key in sorted(KEYS, key=lambda k: FOOTER.index(k.id) if k.in_footer else len(FOOTER))
]


#: The follower's own keys (`compile-playground follow`): it runs nothing, so it has no settings,
#: rerun or export keys; it has these, then the main table's pane, graph, history and quit keys.
FOLLOW_KEYS: tuple[Key, ...] = (
    Key(
        "p",
        "fork",
        "fork",
        "Fork the demo",
        "copy the shown run's snippet into a new file here (never over one) and open your own "
        "playground on it with the presenter's settings",
        "fork",
    ),
    Key(
        "comma",
        "step_run(-1)",
        "prev run",
        "Previous run",
        "show the presenter's previous run (stops following the newest)",
        "run-previous",
        display=",",
    ),
    Key(
        "full_stop",
        "step_run(1)",
        "next run",
        "Next run",
        "show the presenter's next run",
        "run-next",
        display=".",
    ),
    Key(
        "l",
        "live",
        "live",
        "Follow live",
        "jump to the presenter's newest run and follow each new one as it lands",
        "live",
    ),
    Key(
        "o",
        "next_rank",
        "rank",
        "Next rank",
        "across ranks (a --ranks run, or a torchrun job's): which rank the panes show, each in turn",
        "rank",
    ),
    Key("q", "quit", "quit", "Quit", "leave; the presenter's session goes on without you", "quit"),
)
#: What the follower borrows from the main table.
_FOLLOW_SHARED = ("history", "graph-previous", "graph-next")
FOLLOW_FOOTER: tuple[str, ...] = ("fork", "run-previous", "run-next", "live", "pane-source", "history", "quit")
FOLLOW_TABLE: tuple[Key, ...] = FOLLOW_KEYS + tuple(
    key for key in KEYS if key.id in _FOLLOW_SHARED or key.id.startswith("pane-")
)
FOLLOW_BINDINGS: list[Binding] = [
    key.binding(FOLLOW_FOOTER)
    for key in sorted(
        FOLLOW_TABLE, key=lambda k: FOLLOW_FOOTER.index(k.id) if k.id in FOLLOW_FOOTER else len(FOLLOW_FOOTER)
    )
]


def shown_key(key_id: str) -> str:
    """The key a user presses for `key_id`, as the help spells it: for words that name a key."""
    return next(key.shown_key for key in KEYS if key.id == key_id)


def markdown_table(keys: tuple[Key, ...] | None = None) -> str:
    """The key table for the README (`keys`: KEYS, or FOLLOW_TABLE for the follower's), from
    the same source as the bindings."""
    rows = ["| key | does |", "|---|---|"]
    for key in KEYS if keys is None else keys:
        shown = key.key if key.id.startswith("pane-") else key.shown_key
        rows.append(f"| `{shown}` | {key.title}: {key.help} |")
    if keys is None:
        rows.append("| `ctrl+p` | Command palette: every command above, searchable |")
    return "\n".join(rows)
