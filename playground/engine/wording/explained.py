"""torch's explanation of the recompiles in words: one row per recompile and changed argument,
the limits hit with torch's hints, which cache entry ran each call, and what dynamic shapes
made of the inputs (specializations, shape symbols)."""

from __future__ import annotations

from dataclasses import dataclass

from playground.engine.report import Report
from playground.engine.wording.line import BAD, CODE, DIM, GOOD, WARN, Line, at_line

#: The entry a recompile made, when the recompile limit stopped it from making one.
NO_ENTRY = "none (recompile_limit)"
CALLS_TITLE = "which entry ran each call"


@dataclass(frozen=True)
class RecompileRow:
    """One recompile and one argument whose guard failed."""

    call: int | None
    function: str
    entry: str  # the entry the recompile made, "" when the limit stopped it
    what: str  # the argument, or the guard when it is no plain `arg == value`
    arg: str
    guard: str
    was: str  # "" when torch did not say
    now: str
    line: int | None
    failed: tuple[str, ...]  # the cache entries whose guard failed
    note: str  # torch's own words on it, if any

    @property
    def change(self) -> str:
        """ "0.1 -> 0.098", or "" when torch gave no values."""
        return f"{self.was or '?'} -> {self.now or '?'}" if self.was or self.now else ""


def recompile_rows(report: Report) -> tuple[RecompileRow, ...]:
    """Every explained recompile, a row per argument that changed."""
    rows = []
    for rc in report.explanation.recompiles:
        for reason in rc.reasons:
            plain = bool(reason.arg) and reason.guard.startswith(f"{reason.arg} ==")
            what = reason.arg if plain else reason.guard
            rows.append(
                RecompileRow(
                    rc.call,
                    rc.function,
                    rc.entry or "",
                    what,
                    reason.arg,
                    reason.guard,
                    reason.was,
                    reason.now,
                    reason.line,
                    reason.entries,
                    reason.note,
                )
            )
    return tuple(rows)


def failed_words(entries: tuple[str, ...]) -> str:
    """The cache entries a guard failed in: named when few, counted when a recompile_limit run
    would otherwise repeat every older entry on every row."""
    if len(entries) <= 2:
        return ", ".join(entries)
    return f"{len(entries)} ({entries[0]} … {entries[-1]})"


def limit_lines(report: Report) -> tuple[Line, ...]:
    """Each limit hit, what used it up, then torch's hints and guide under it (depth 1)."""
    lines = []
    for limit in report.explanation.limits:
        on = (
            (", used up by changes of ", (limit.arg, CODE), f" ({limit.recompiles_on_arg} recompiles)")
            if limit.arg
            else ()
        )
        lines.append(Line.of((limit.function, CODE), f" hit {limit.config} = {limit.limit}", *on, "."))
        lines += [Line.of(f"hint: {hint}", tag=WARN, depth=1) for hint in limit.hints]
        lines.append(Line.of(f"torch's guide: {limit.doc}" if limit.doc else "", tag=DIM, depth=1))
    return tuple(line for line in lines if line.pieces)


def call_lines(report: Report) -> tuple[Line, ...]:
    """Which cache entry ran each call, an eager fallback marked bad and a cached one good;
    first, when Dynamo's frames say the calls ran eagerly however they looked, that."""
    tags = {"eager": BAD, "cached": GOOD}
    calls = tuple(Line.of(c.summary, tag=tags.get(c.status, "")) for c in report.explanation.calls if c.summary)
    return frame_lines(report) + calls


def frame_lines(report: Report) -> tuple[Line, ...]:
    """What Dynamo's frames say when they say something: it was handed none (nothing was
    compiled), or it gave up on some (they ran eagerly). Frames converted into no graph at all
    are the timing's note already ("no graph: ... eager with eager")."""
    frames = report.explanation.frames
    if frames is None or report.error is not None or report.calls == 0:
        return ()  # no call, no frame to hand: a program's never-called callable says so itself
    if frames.total == 0:
        return (Line.of("Dynamo was handed no frame: nothing was compiled, every call ran eagerly", tag=BAD),)
    gave_up = frames.total - frames.converted
    if gave_up:
        # A snippet's frame that raised is its run's error (no line here); a program may catch
        # what a compile raised (fail_on_recompile, a forbidden callable) and go on.
        went = (
            "they ran eagerly, or what Dynamo raised reached the program"
            if report.kind == "program"
            else ("they ran eagerly")
        )
        return (Line.of(f"Dynamo gave up on {gave_up} of the {frames.total} frames it was handed: {went}", tag=WARN),)
    return ()


def shape_lines(report: Report) -> tuple[Line, ...]:
    """Under dynamic shapes, why there is a second entry: each input dimension torch fixed to
    a value (with its reason under it), then each one it made symbolic (with its guards)."""
    ex = report.explanation
    lines = []
    for spec in ex.specializations:
        lines.append(
            Line.of(
                "specialized ",
                (spec.source, CODE),
                f" = {spec.value} in {spec.compile_id}",
                at_line(spec.line),
                tag=WARN,
            )
        )
        lines.append(Line.of(f"torch: {spec.reason}" if spec.reason else "", tag=DIM, depth=1))
    for sym in ex.symbols:
        lines.append(
            Line.of(
                f"shape symbol {sym.symbol} in {sym.compile_id} = ",
                (sym.source, CODE),
                f", range {sym.range}",
                at_line(sym.line),
            )
        )
        lines += [Line.of("guard ", (g.expr, CODE), at_line(g.line), tag=DIM, depth=1) for g in sym.guards]
    return tuple(line for line in lines if line.pieces)
