"""The session's run history and before/after comparisons. Torch-free.

Every complete run is kept (content hash, settings, summary, time, the source that ran) so the
app can say what an edit changed: breaks 1 -> 0, recompiles 8 -> 1, speedup 1.1x -> 1.9x,
equivalence ok -> FAIL, with a diff of the snippet lines that changed.
"""

from __future__ import annotations

import difflib
import time
from dataclasses import dataclass, field

from playground.engine.report import Report
from playground.engine.settings import Settings, config_word
from playground.engine.wording.timings import speedup_word


@dataclass(frozen=True)
class Entry:
    number: int
    report: Report
    source: str
    at: float

    @property
    def settings(self) -> Settings:
        return self.report.settings

    def label(self) -> str:
        """One line that fits 80 columns: number, time, content, the settings that differ
        from the defaults, and the counts."""
        clock = time.strftime("%H:%M:%S", time.localtime(self.at))
        sha = self.report.content_sha256[:6] or "------"
        s = self.settings
        parts = [s.backend]
        if s.fullgraph:
            parts.append("fullgraph")
        if s.dynamic is not None:
            parts.append(f"dynamic={'true' if s.dynamic else 'false'}")
        if s.mode:
            parts.append(s.mode)
        if s.device != "cpu":
            parts.append(s.device)
        if s.target:
            parts.append(s.target_word())
        parts.extend(s.switch_words())  # torch's own switches, when any is set
        r = self.report
        if r.error:
            state = f"{r.error.kind} error"
        else:
            state = f"g{r.graph_count} b{r.graph_break_count} r{r.recompile_count} eq {r.equivalence_word}"
        return f"#{self.number} {clock} {sha} {' '.join(parts)}: {state}"


@dataclass(frozen=True)
class Change:
    what: str
    before: str
    after: str

    def __str__(self) -> str:
        return f"{self.what} {self.before} -> {self.after}"


#: A speedup change smaller than this fraction is timing noise on a shared machine, not news.
SPEEDUP_NOISE = 0.15


def _speedup(r: Report) -> str:
    return speedup_word(r.timings)


def _speedup_moved(before: Report, after: Report) -> bool:
    a = before.timings.speedup if before.timings else None
    b = after.timings.speedup if after.timings else None
    if a is None or b is None:
        return (a is None) != (b is None)
    if _speedup(before) == "unreliable" or _speedup(after) == "unreliable":
        return _speedup(before) != _speedup(after)  # a measurement, not the compile, moved
    return abs(b - a) > SPEEDUP_NOISE * max(abs(a), 1e-9)


def _error(r: Report) -> str:
    return r.error.kind if r.error else "none"


def _switches(s: Settings) -> dict[str, str]:
    """Torch's own switches as name -> shown value; absent means torch's default."""
    shown = {key: word.partition("=")[2] for key, value in s.config for word in [config_word(key, value)]}
    if s.stance != "default":
        shown["stance"] = s.stance
    if s.error_on_graph_break:
        shown["error_on_graph_break"] = "on"
    if s.target:
        shown["target"] = s.target
    return shown


def settings_changes(before: Settings, after: Settings) -> list[Change]:
    """Torch's switches that differ between two runs: each config key, the stance and
    error_on_graph_break ("unset" where a run left torch's default). The toggles are not
    listed: the comparison shows both runs' settings labels beside the numbers."""
    found: list[Change] = []
    a, b = _switches(before), _switches(after)
    for name in sorted(set(a) | set(b)):
        if a.get(name) != b.get(name):
            found.append(Change(name, a.get(name, "unset"), b.get(name, "unset")))
    return found


def changes(before: Report, after: Report) -> list[Change]:
    """What differs between two runs, in the order a reader cares about: torch's switches that
    changed first (the cause), then the numbers (the effect)."""
    pairs = [
        ("error", _error(before), _error(after)),
        ("graphs", str(before.graph_count), str(after.graph_count)),
        ("breaks", str(before.graph_break_count), str(after.graph_break_count)),
        ("recompiles", str(before.recompile_count), str(after.recompile_count)),
        (
            "recompile limit",
            "hit" if before.recompile_limit_hit else "no",
            "hit" if after.recompile_limit_hit else "no",
        ),
        ("equivalence", before.equivalence_word, after.equivalence_word),
    ]
    found = settings_changes(before.settings, after.settings)
    found += [Change(w, b, a) for w, b, a in pairs if b != a]
    if _speedup_moved(before, after):
        found.append(Change("speedup", _speedup(before), _speedup(after)))
    return found


def source_diff(before: str, after: str, context: int = 1) -> list[str]:
    """Unified diff lines of the snippet (without the file headers)."""
    lines = difflib.unified_diff(before.splitlines(), after.splitlines(), "before", "after", n=context, lineterm="")
    return [line for line in lines if not line.startswith(("---", "+++"))]


@dataclass
class History:
    """Runs of this session, oldest first."""

    entries: list[Entry] = field(default_factory=list)
    limit: int = 500

    def add(self, report: Report, source: str, at: float | None = None) -> Entry:
        entry = Entry(len(self.entries) + 1, report, source, time.time() if at is None else at)
        self.entries.append(entry)
        if len(self.entries) > self.limit:
            del self.entries[0]
        return entry

    def previous_same_settings(self, entry: Entry) -> Entry | None:
        """The newest earlier run under the same settings: what "since last time" means."""
        for other in reversed(self.entries):
            if other.number < entry.number and other.settings == entry.settings:
                return other
        return None

    def get(self, number: int) -> Entry | None:
        for entry in self.entries:
            if entry.number == number:
                return entry
        return None


@dataclass(frozen=True)
class Trend:
    """One figure across the session's runs, oldest first: `values` are the runs that have it
    (a run that failed has no graph count, one without timings no speedup), and `words` say
    the newest, the lowest and the highest, for the views that draw `values` as a sparkline:
    the numbers stay beside the picture."""

    label: str
    values: tuple[float, ...]
    words: str


def _figure(value: float, unit: str) -> str:
    if unit == "x":
        return f"{value:.2f}x"
    if unit == " s":
        return f"{value:.3g} s"
    return f"{value:.0f}"


def _trend(label: str, values: list[float | None], unit: str, doubtful: list[bool] | None = None) -> Trend:
    """`doubtful` marks the values measured but not to be believed (an unreliable speedup):
    drawn with the rest, since a busy machine would leave no picture at all, and counted in
    the words, whose "now" never states a doubtful figure as a result."""
    doubtful = doubtful or [False] * len(values)
    known = [(v, d) for v, d in zip(values, doubtful) if v is not None]
    if not known:
        return Trend(label, (), "n/a")
    newest, newest_doubtful = known[-1]
    span = f"{_figure(min(v for v, _ in known), unit)} to {_figure(max(v for v, _ in known), unit)}"
    doubted = sum(d for _, d in known)
    if doubted == len(known):
        words = f"all {doubted} unreliable" + (f": {span}" if len(known) > 1 else f": {_figure(newest, unit)}")
    else:
        parts = ["now unreliable" if newest_doubtful else f"{_figure(newest, unit)} now"]
        if len(known) > 1:
            parts.append(span)
        if doubted:
            parts.append(f"{doubted} unreliable")
        words = ", ".join(parts)
    if len(known) < len(values):
        words += f" ({len(known)} of {len(values)} runs)"
    return Trend(label, tuple(v for v, _ in known), words)


def trends(entries: list[Entry]) -> tuple[Trend, ...]:
    """Speedup, compile time, graphs and breaks across `entries` (oldest first)."""
    reports = [e.report for e in entries]
    timings = [r.timings for r in reports]
    return (
        _trend(
            "speedup",
            [t.speedup if t else None for t in timings],
            "x",
            doubtful=[bool(t and t.unreliable) for t in timings],
        ),
        _trend("compile time", [t.compile_s if t else None for t in timings], " s"),
        _trend("graphs", [None if r.error else float(r.graph_count) for r in reports], ""),
        _trend("breaks", [None if r.error else float(r.graph_break_count) for r in reports], ""),
    )


def describe(before: Entry, after: Entry) -> str:
    """One line: "#3 -> #4: breaks 1 -> 0, graphs 2 -> 1" (or "no change")."""
    found = changes(before.report, after.report)
    body = ", ".join(str(c) for c in found) if found else "no change in the numbers"
    return f"#{before.number} -> #{after.number}: {body}"
