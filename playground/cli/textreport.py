"""The compact, readable text form of a report, for `check` without --json. Torch-free."""

from __future__ import annotations

import os
from collections.abc import Iterable

from playground.engine.findings import still_compiling
from playground.engine.report import Report
from playground.engine.textsafe import one_line, visible
from playground.engine.wording import (
    breaks,
    compiled,
    errors,
    explained,
    fixes,
    guard_what_if,
    phases,
    save_waterfall,
    timings,
)
from playground.engine.wording import dynamo_code as dynamo_words
from playground.engine.wording import equivalence as verdicts
from playground.engine.wording import program as program_words
from playground.engine.wording import ranks as rank_words
from playground.engine.wording.line import Line, at_line


def render(report: Report) -> str:
    lines: list[str] = []
    for section in (
        _head_lines,
        _program_lines,
        _rank_lines,
        _break_lines,
        _limit_lines,
        _recompile_lines,
        _call_and_shape_lines,
        _equivalence_lines,
        _timing_lines,
        _guard_what_if_lines,
        _fixes_lines,
        _compiled_code_lines,
        _dynamo_code_lines,
        _note_and_output_lines,
    ):
        lines += section(report)
    # One escape for the whole report: every line may quote the snippet (output, errors, reasons).
    return visible("\n".join(lines))


def render_findings(report: Report) -> str:
    """Dynamo's findings, shown while the run's own backend still compiles (watch's text form of
    the findings stage): what Dynamo traced, its breaks, the recompile limit and recompiles. The
    complete report follows and says where the backend changed them."""
    lines = [
        f"{still_compiling(report.settings.backend)}... Dynamo's findings:",
        f"graphs {report.graph_count}  breaks {report.graph_break_count}  recompiles {report.recompile_count}",
    ]
    for section in (_break_lines, _limit_lines, _recompile_lines):
        lines += section(report)
    return visible("\n".join(lines))


def _head_lines(report: Report) -> list[str]:
    """The snippet and settings, the summary, and what went wrong before anything else."""
    # A file name is one line of the header, whatever it holds (a newline would start another).
    name = one_line(os.path.basename(report.snippet)) or "snippet"
    label = program_words.settings_words(report) if report.kind == "program" else report.settings.label()
    lines = [f"{name}  torch {report.torch_version}  {label}"]
    lines.append(report.summary_line() + f"  calls {report.calls}")
    if report.worker_restarted:
        lines.append(f"note: the worker restarted ({report.worker_restart_reason})")
    refused = errors.refused_break(report)
    if refused is not None:
        # fullgraph=True's refusal is the run's finding, worded as the app words it.
        lines.append(errors.refusal_words(report, width=errors.FULL_WIDTH))
        lines += _indented(breaks.site_lines(refused)[1:])
    elif report.error is not None:
        lines.append(f"ERROR {errors.missing_backend(report) or report.error.one_line(report.kind == 'program')}")
    if report.recompile_limit_hit:
        lines.append(
            "RECOMPILE LIMIT HIT: fell back to eager for " + "; ".join(report.recompile_limit_functions or ("a frame",))
        )
    return lines


def _break_lines(report: Report) -> list[str]:
    if not report.graph_breaks:
        return []
    lines = [f"graph breaks ({report.graph_break_count}):"]
    lines += _indented(breaks.distinct_lines(report))
    for site in report.graph_breaks:
        lines += _indented(breaks.site_lines(site, report.snippet))
    return lines


def _limit_lines(report: Report) -> list[str]:
    return _indented(explained.limit_lines(report))


def _recompile_lines(report: Report) -> list[str]:
    """The explained recompiles, one line per changed argument; torch's raw reasons otherwise."""
    rows = explained.recompile_rows(report)
    lines: list[str] = []
    if rows:
        lines.append(f"recompiles ({report.recompile_count}): function, entry, argument: was -> now (line)")
        for row in rows:
            # Without an argument the guard is the name: said once, not twice.
            change = f": {row.change}" if row.change else (f": {row.guard}" if row.arg else "")
            call = f"call {row.call} " if row.call else ""
            what = row.arg or row.guard
            lines.append(f"  {call}{row.function} {row.entry or explained.NO_ENTRY} {what}{change}{at_line(row.line)}")
    elif report.recompiles:
        lines.append(f"recompiles ({report.recompile_count}):")
        for r in report.recompiles:
            lines.append(f"  {r.function} [{r.compile_id or '?'}]: {'; '.join(r.reasons) or 'no reason logged'}")
    return lines


def _call_and_shape_lines(report: Report) -> list[str]:
    ex = report.explanation
    lines: list[str] = []
    eventful = report.recompiles or any(c.status != "cached" for c in ex.calls[1:])
    if (ex.calls and eventful) or explained.frame_lines(report):
        lines.append(f"{explained.CALLS_TITLE}:")
        lines += _indented(explained.call_lines(report))
    return lines + _indented(explained.shape_lines(report), indent="")


def _equivalence_lines(report: Report) -> list[str]:
    eq = report.equivalence
    if eq is None:
        return []
    lines = [f"equivalence: {verdicts.headline(eq)}"]
    for row in verdicts.rows(eq):
        note = f"  ({row.detail})" if row.detail else ""
        lines.append(f"  {row.kind} call {row.call} {row.name}: {row.result}  {row.diff}{note}")
    lines += [f"  {text}" for text in verdicts.footnotes(eq)]
    return lines


def _timing_lines(report: Report) -> list[str]:
    """The cold first call, compile time per phase, the steady state and why the speedup is what it is."""
    t = report.timings
    if t is None:
        return []
    lines = [timings.cold_call_line(t).text]
    if t.note:
        lines.append(f"  ({t.note})")
    lines += _phase_lines(report)
    lines.append(f"{timings.steady_words(t)}  {timings.speedup_line(report, t).text}")
    lines += _indented(timings.timing_notes(report, t))
    lines.append(f"  {timings.timed_words(report, t)}")
    lines += save_waterfall.text_lines(report)
    return lines


def _guard_what_if_lines(report: Report) -> list[str]:
    """What torch's unsafe guard switches would save the timed call (`--guard-what-if`)."""
    return _indented(guard_what_if.what_if_lines(report), indent="")


def _fixes_lines(report: Report) -> list[str]:
    """The remedies tried (`--try-fixes`), best first, and the breaks none removed."""
    return _indented(fixes.fix_lines(report), indent="")


def _compiled_code_lines(report: Report) -> list[str]:
    """What each compile made, and the kernels profile when the run asked for it."""
    return _indented(compiled.anatomy_lines(report) + compiled.kernel_lines(report), indent="")


def _dynamo_code_lines(report: Report) -> list[str]:
    """The code Dynamo wrote, when the run asked for it (`--code`): each piece under its heading."""
    if report.dynamo_code is None:
        return []
    lines = ["Dynamo's code:"]
    note = dynamo_words.note_line(report)
    if note is not None:
        lines.append(f"  {note.text}")
    if not report.dynamo_code:
        return [*lines, f"  {dynamo_words.NO_FRAME}"]
    lines.append(f"  {dynamo_words.summary_line(report.dynamo_code).text}")
    for item in report.dynamo_code:
        lines.append(f"  {dynamo_words.heading_line(item).text}")
        lines += [f"    | {line}" for line in item.source.rstrip("\n").splitlines()]
    return lines


def _phase_lines(report: Report) -> list[str]:
    """Compile time per phase (seconds), one line per frame compile, then the coverage."""
    table = phases.phase_table(report)
    if table is None:
        return []
    widths = [max(len(cell) for cell in column) for column in zip(table.header, *table.all_rows)]
    lines = [f"{phases.TITLE}:"]
    for row in [table.header, *table.all_rows]:
        lines.append(
            "  " + "  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths)))
        )
    if table.coverage:
        lines.append(f"  {table.coverage}")
    return lines


def _note_and_output_lines(report: Report) -> list[str]:
    """The notes, then the first lines the snippet printed. A note the equivalence section has
    printed already (a program's runs that parted) is not printed twice."""
    shown_above = report.equivalence.note if report.equivalence is not None else ""
    lines = [f"note: {note}" for note in report.notes if not (note and note in shown_above)]
    if report.output.text.strip():
        out = report.output.text.strip().splitlines()
        shown = out[:8]
        whose = "program" if report.kind == "program" else "snippet"
        lines.append(f"{whose} output ({report.output.bytes} bytes{', truncated' if report.output.truncated else ''}):")
        lines.extend("  | " + line[:200] for line in shown)
        if len(out) > len(shown):
            lines.append(f"  | … {len(out) - len(shown)} more lines")
    return lines


def _rank_lines(report: Report) -> list[str]:
    """Across ranks: what differs between them, then a line per rank; rank 0's details below."""
    found = rank_words.rank_lines(report)
    if not found:
        return []
    return [*_indented(found, indent=""), "rank 0's report:"]


def _program_lines(report: Report) -> list[str]:
    """A program's sections, one per compiled callable, before the totals' details."""
    if report.kind != "program":
        return []
    return _indented(program_words.program_lines(report), indent="")


def _indented(lines: Iterable[Line], indent: str = "  ") -> list[str]:
    return [indent + "  " * line.depth + line.text for line in lines]
