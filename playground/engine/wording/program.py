"""A program's report in words: how it ran, where a bound stopped it, and one section per
compiled callable (where it was made, its options and what the toggles replaced, its calls,
graphs, breaks and recompiles). The text report, Markdown and the app's pane all read these."""

from __future__ import annotations

import os

from playground.engine.program import callable_key, matches
from playground.engine.report import CompiledCallable, Report
from playground.engine.report.timings import TorchBenchmark
from playground.engine.settings import dynamic_name
from playground.engine.wording import breaks
from playground.engine.wording.line import BAD, DIM, GOOD, HEADING, WARN, Line, plural

#: How each kind of callable was made, as the section's title says it.
KIND_WORDS = {
    "function": "torch.compile(fn)",
    "module": "torch.compile(module)",
    "module.compile": "module.compile()",
    "method": "torch.compile(bound method)",
}


def keys(report: Report) -> tuple[str, ...]:
    """Each callable's key, in the report's order: what --callable and the app's target name."""
    names = [c.name for c in report.callables]
    return tuple(callable_key(c.name, c.index, names) for c in report.callables)


#: The settings a program's toggles may replace, as the settings label words them.
_TOGGLE_WORDS = {
    "fullgraph": lambda s: f"fullgraph={'on' if s.fullgraph else 'off'}",
    "dynamic": lambda s: f"dynamic={dynamic_name(s.dynamic)}",
    "backend": lambda s: f"backend={s.backend}",
    "mode": lambda s: f"mode={s.mode or 'default'}",
}


def settings_words(report: Report) -> str:
    """A program's settings as its header says them: what the user toggled over the program's
    own torch.compile arguments (and on which callable), else "as written"; torch's switches."""
    program = report.program
    toggled = [_TOGGLE_WORDS[k](report.settings) for k in (program.toggled if program else ()) if k in _TOGGLE_WORDS]
    words = "program as written" if not toggled else "program, toggled " + " ".join(toggled)
    if toggled and program is not None and program.only is not None:
        words += f" on {program.only}"
    return "  ".join([words, f"device={report.settings.device}", *report.settings.switch_words()])


def ended_line(report: Report) -> Line | None:
    """Where a bound stopped the program, or how it ended when that is news (an exit status,
    an exception); None for a program that ran to its end."""
    if report.stopped is not None:
        by = report.stopped.by
        at = (
            f"{report.stopped.at:g} s (its time bound: --max-seconds, else a third of --timeout)"
            if by == "max_seconds"
            else f"{plural(int(report.stopped.at), 'call')} (--max-calls)"
        )
        return Line.of(f"stopped at {at}: what ran until then, not an error", tag=WARN)
    end = report.program_exit
    if end is None:
        return None
    if end.exception is not None:
        where = f" at line {end.exception.line}" if end.exception.line else ""
        return Line.of(f"the program raised {end.exception.type}{where}: {end.exception.message}", tag=BAD)
    if end.code:
        return Line.of(f"the program exited with status {end.code}", tag=BAD)
    return None


def headline(report: Report) -> Line:
    """ "program: 2 compiled callables, 6 calls, graphs 4, breaks 0, recompiles 2": the sum of
    the sections (each record belongs to one), so it holds for a report focused on one."""
    cs = report.callables
    calls = sum(c.calls for c in cs) if cs else report.calls
    graphs = sum(c.graph_count for c in cs) if cs else report.graph_count
    breaks_ = sum(c.graph_break_count for c in cs) if cs else report.graph_break_count
    recompiles = sum(c.recompile_count for c in cs) if cs else report.recompile_count
    return Line.of(
        ("program: ", HEADING),
        f"{plural(len(cs), 'compiled callable')}, {plural(calls, 'call')}  ",
        (f"graphs {graphs}  breaks {breaks_}  recompiles {recompiles}", DIM),
    )


def callable_lines(
    c: CompiledCallable, key: str, program_file: str = "", *, detail: bool = False, target: bool = False
) -> tuple[Line, ...]:
    """One callable's section: its title (key, how it was made, where) with its counts, the
    options the program gave with what the toggles replaced, its notes (a callable that compiled
    nothing says why), then each break site (`detail`: with torch's explanation and hints) and
    recompile under it. `target`: the toggles act on this one alone (--callable, key o)."""
    place = f"line {c.line}" if c.line else "an unknown line"
    if c.file and program_file and os.path.realpath(c.file) != os.path.realpath(program_file):
        place = f"{os.path.basename(c.file)}:{c.line}" if c.line else os.path.basename(c.file)
    compiled_nothing = c.calls > 0 and c.graph_count == 0
    counts_tag = WARN if compiled_nothing or c.graph_break_count or c.recompile_count else GOOD
    lines = [
        Line.of(
            (key, HEADING),
            f"  {KIND_WORDS.get(c.kind, c.kind)} at {place}",
            ("  ◀ the toggles act on this one" if target else "", WARN),
            tag=HEADING,
        ),
        Line.of(
            (
                f"calls {c.calls}  graphs {c.graph_count}  breaks {c.graph_break_count}  recompiles {c.recompile_count}",
                counts_tag,
            ),
            ("  RECOMPILE LIMIT HIT: fell back to eager" if c.recompile_limit_hit else "", BAD),
            depth=1,
        ),
    ]
    given = {k: v for k, v in c.options.items() if k not in c.toggled}
    if given:
        lines.append(Line.of(("options: " + ", ".join(f"{k}={v}" for k, v in given.items()), DIM), depth=1))
    for k, change in c.toggled.items():
        lines.append(Line.of((f"{k}: {change} (toggled)", WARN), depth=1))
    for note in c.notes:
        if note.startswith("program: ") and "(toggled)" in note:
            continue  # said just above
        lines.append(Line.of((note, WARN if compiled_nothing else DIM), depth=1))
    lines += _against_eager(c)
    for site in c.graph_breaks:
        shown = breaks.site_lines(site, program_file or None)
        shown = shown if detail else shown[:1]
        lines += [Line.of(*line.pieces, tag=line.tag, depth=1 + line.depth) for line in shown]
    for r in c.recompiles:
        where = f"line {r.line}" if r.line else r.function
        reason = r.reasons[0] if r.reasons else "guards failed"
        lines.append(Line.of(f"recompile {r.compile_id or ''} at {where}: ", (reason, WARN), depth=1))
    return tuple(lines)


def _against_eager(c: CompiledCallable) -> list[Line]:
    """Its values against the program run eagerly, then its steady-state times with its break
    count beside them (a speedup is never shown without it)."""
    lines: list[Line] = []
    eq = c.equivalence
    if eq is not None:
        differs = [e for e in eq.outputs if e.compared and not e.ok]
        if differs:
            first = differs[0]
            worst = f"max_abs {first.max_abs:.3g}" if first.max_abs is not None else first.note
            lines.append(
                Line.of(
                    ("values: DIFFER from eager ", BAD),
                    f"({plural(len(differs), 'leaf', 'leaves')}; first {first.name} at its call {first.call}: {worst})",
                    depth=1,
                )
            )
        else:
            lines.append(Line.of((f"values: {eq.verdict or 'ok'} against eager", GOOD), f"  ({eq.note})", depth=1))
    t = c.timings
    if t is not None and t.compiled_ms is not None and t.eager_ms is not None:
        speed = f"{t.speedup:.2f}x" if t.speedup is not None else "n/a"
        shaky = f"  unreliable: {t.unreliable}" if t.unreliable else ""
        lines.append(
            Line.of(
                f"steady {plural(t.compiled_runs, 'call')}: eager {t.eager_ms:.3g} ms  compiled {t.compiled_ms:.3g} ms  ",
                (f"{speed} ({plural(c.graph_break_count, 'break')})", WARN if shaky else DIM),
                (shaky, WARN),
                depth=1,
            )
        )
        lines += _benchmark_lines(t.benchmark, c.graph_break_count)
    return lines


def _benchmark_lines(bench: TorchBenchmark | None, breaks: int) -> list[Line]:
    """torch.utils.benchmark's figure for the callable's last steady call's arguments (the
    report's docs say which call), or why there is none."""
    if bench is None:
        return []
    if bench.speedup is None or bench.eager_ms is None or bench.compiled_ms is None:
        return [Line.of((f"torch.utils.benchmark: {bench.note or 'no figure'}", DIM), depth=1)]
    return [
        Line.of(
            f"torch.utils.benchmark: eager {bench.eager_ms:.3g} ms  compiled {bench.compiled_ms:.3g} ms  ",
            (f"{bench.speedup:.2f}x ({plural(breaks, 'break')})", DIM),
            depth=1,
        )
    ]


def program_lines(report: Report, *, detail: bool = False) -> tuple[Line, ...]:
    """The whole program: the headline, how it ended, then each callable's section."""
    lines = [headline(report)]
    ended = ended_line(report)
    if ended is not None:
        lines.append(ended)
    if not report.callables:
        lines.append(Line.of("the program made no compiled callable (it never called torch.compile)", tag=WARN))
    only = report.program.only if report.program is not None and report.program.toggled else None
    idle = [key for c, key in zip(report.callables, keys(report), strict=True) if c.calls == 0]
    # A program stopped early (or a recipe that compiles 64 layers and calls a few) would list
    # each never-called callable's four lines: past the first, they are one line.
    folded = set(idle[1:]) if len(idle) > IDLE_SHOWN else set()
    sections = []
    for c, key in zip(report.callables, keys(report), strict=True):
        if key in folded:
            continue
        target = only is not None and matches(only, c.name, c.index)
        body = callable_lines(c, key, report.snippet, detail=detail, target=target)
        # The section without its key: two callables whose sections are alike in every word.
        alike = None if target else callable_lines(c, "", report.snippet, detail=detail)
        sections.append((key, body, alike))
    lines += _alike_folded(sections)
    if folded:
        names = ", ".join(idle[1 : 1 + IDLE_NAMED]) + (", …" if len(folded) > IDLE_NAMED else "")
        lines += [
            Line.of(""),
            Line.of(f"{plural(len(folded), 'more callable')} never called, so never compiled: {names}", tag=WARN),
        ]
    return tuple(lines)


#: Never-called callables shown each in full before they are folded into one line, and how many
#: of the folded ones that line names.
IDLE_SHOWN, IDLE_NAMED = 3, 6
#: Callables whose sections say the same words as the one before them, past which they are one
#: line (the regional-compilation recipe's 63 layers that ran what its first layer compiled).
ALIKE_FOLDED = 3


def _alike_folded(sections: list[tuple[str, tuple[Line, ...], tuple[Line, ...] | None]]) -> list[Line]:
    """Each section after a blank line; a run of ALIKE_FOLDED or more sections alike in every
    word but their key, after the first of them, as one line naming them."""
    lines: list[Line] = []
    i = 0
    while i < len(sections):
        key, body, alike = sections[i]
        j = i + 1
        while alike is not None and j < len(sections) and sections[j][2] == alike:
            j += 1
        lines += [Line.of(""), *body]
        run = [k for k, _, _ in sections[i + 1 : j]]
        if len(run) >= ALIKE_FOLDED:
            names = f"{run[0]} … {run[-1]}" if len(run) > 2 else ", ".join(run)
            lines += [
                Line.of(""),
                Line.of(f"{plural(len(run), 'more callable')} alike, each as {key} above: {names}", tag=DIM),
            ]
        else:
            for _, more, _ in sections[i + 1 : j]:
                lines += [Line.of(""), *more]
        i = j
    return lines
