"""The compact, readable text form of a report, for `check` without --json. Torch-free."""

from __future__ import annotations

import os

from playground.engine import phases, verdicts
from playground.engine.report import Report
from playground.engine.speedup import (
    machine_line,
    memory_line,
    speedup_reasons,
    speedup_spread,
    speedup_word,
    unreliable_line,
)
from playground.engine.textsafe import one_line, visible


def _fmt_ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f} ms"


def render(report: Report) -> str:
    lines: list[str] = []
    for section in (
        _head_lines,
        _break_lines,
        _limit_lines,
        _recompile_lines,
        _call_and_shape_lines,
        _equivalence_lines,
        _timing_lines,
        _note_and_output_lines,
    ):
        lines += section(report)
    # One escape for the whole report: every line may quote the snippet (output, errors, reasons).
    return visible("\n".join(lines))


def _head_lines(report: Report) -> list[str]:
    """The snippet and settings, the summary, and what went wrong before anything else."""
    # A file name is one line of the header, whatever it holds (a newline would start another).
    name = one_line(os.path.basename(report.snippet)) or "snippet"
    lines = [f"{name}  torch {report.torch_version}  {report.settings.label()}"]
    lines.append(report.summary_line() + f"  calls {report.calls}")
    if report.worker_restarted:
        lines.append(f"note: the worker restarted ({report.worker_restart_reason})")
    if report.error is not None:
        lines.append(f"ERROR {report.error.one_line()}")
    if report.recompile_limit_hit:
        lines.append(
            "RECOMPILE LIMIT HIT: fell back to eager for " + "; ".join(report.recompile_limit_functions or ("a frame",))
        )
    return lines


def _break_lines(report: Report) -> list[str]:
    if not report.graph_breaks:
        return []
    lines = [f"graph breaks ({report.graph_break_count}):"]
    for b in report.graph_breaks:
        where = f"line {b.line}" if b.line else os.path.basename(b.file)
        gb = f" [{b.gb_id}]" if b.gb_id else ""
        lines.append(f"  {where}: {b.reason}{gb}  x{b.count}")
        if b.hint:
            lines.append(f"    hint: {b.hint}")
    return lines


def _limit_lines(report: Report) -> list[str]:
    lines: list[str] = []
    for limit in report.explanation.limits:
        on = f", used up by changes of {limit.arg} ({limit.recompiles_on_arg} recompiles)" if limit.arg else ""
        lines.append(f"  {limit.function}: {limit.config} = {limit.limit}{on}")
        lines.extend(f"    hint: {hint}" for hint in limit.hints)
        if limit.doc:
            lines.append(f"    torch's guide: {limit.doc}")
    return lines


def _recompile_lines(report: Report) -> list[str]:
    """The explained recompiles, one line per changed argument; torch's raw reasons otherwise."""
    ex = report.explanation
    lines: list[str] = []
    if ex.recompiles:
        lines.append(f"recompiles ({report.recompile_count}): function, entry, argument: was -> now (line)")
        for rc in ex.recompiles:
            for row in rc.reasons or ():
                where = f"  (line {row.line})" if row.line else ""
                # Without an argument the guard is the name: said once, not twice.
                change = f": {row.was or '?'} -> {row.now or '?'}" if row.was or row.now else ""
                change = change or (f": {row.guard}" if row.arg else "")
                entry = rc.entry or "(limit: not compiled)"
                call = f"call {rc.call} " if rc.call else ""
                lines.append(f"  {call}{rc.function} {entry} {row.arg or row.guard}{change}{where}")
    elif report.recompiles:
        lines.append(f"recompiles ({report.recompile_count}):")
        for r in report.recompiles:
            lines.append(f"  {r.function} [{r.compile_id or '?'}]: {'; '.join(r.reasons) or 'no reason logged'}")
    return lines


def _call_and_shape_lines(report: Report) -> list[str]:
    ex = report.explanation
    lines: list[str] = []
    if ex.calls and (report.recompiles or any(c.status != "cached" for c in ex.calls[1:])):
        lines.append("calls:")
        lines.extend(f"  {c.summary}" for c in ex.calls if c.summary)
    for sym in ex.symbols:
        where = f"  (line {sym.line})" if sym.line else ""
        lines.append(f"shape symbol {sym.compile_id} {sym.symbol} = {sym.source} range {sym.range}{where}")
    for spec in ex.specializations:
        where = f"  (line {spec.line})" if spec.line else ""
        lines.append(f"specialized {spec.compile_id} {spec.source} = {spec.value}: {spec.reason}{where}")
    return lines


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
    compile_s = "n/a" if t.compile_s is None else f"{t.compile_s:.3f} s"
    lines = [f"cold first call (compile included): {compile_s}  compile cache: {t.compile_cache}"]
    if t.note:
        lines.append(f"  ({t.note})")
    lines += _phase_lines(report)  # issue 12: compile time per phase
    spread_e = "" if t.eager_iqr_ms is None else f" ±{t.eager_iqr_ms:.3f}"
    spread_c = "" if t.compiled_iqr_ms is None else f" ±{t.compiled_iqr_ms:.3f}"
    speed = speedup_word(t)
    spread = speedup_spread(t)
    lines.append(
        f"steady state on {t.device} (median, IQR): eager {_fmt_ms(t.eager_ms)}{spread_e}  "
        f"compiled {_fmt_ms(t.compiled_ms)}{spread_c}  speedup {speed}"
        + (f" ({spread})" if spread and not t.unreliable else "")
        + f" with {report.graph_count} graphs and {report.graph_break_count} breaks"
    )
    if t.unreliable:
        lines.append(f"  {unreliable_line(t)}")
    if machine_line(t):
        lines.append(f"  machine while timing: {machine_line(t)}")
    if memory_line(report):
        lines.append(f"  {memory_line(report)}")
    for reason in speedup_reasons(report):
        lines.append(f"  why {speed}: {reason}")
    return lines


def _note_and_output_lines(report: Report) -> list[str]:
    """The notes, then the first lines the snippet printed."""
    lines = [f"note: {note}" for note in report.notes]
    if report.output.text.strip():
        out = report.output.text.strip().splitlines()
        shown = out[:8]
        lines.append(f"snippet output ({report.output.bytes} bytes{', truncated' if report.output.truncated else ''}):")
        lines.extend("  | " + line[:200] for line in shown)
        if len(out) > len(shown):
            lines.append(f"  | … {len(out) - len(shown)} more lines")
    return lines


def _phase_lines(report: Report) -> list[str]:
    """Compile time per phase (seconds), one line per frame compile, then the coverage."""
    header, rows = phases.phase_table(report)
    if not rows:
        return []
    widths = [max(len(cell) for cell in column) for column in zip(header, *rows)]
    lines = ["compile time by phase (s):"]
    for row in [header, *rows]:
        lines.append(
            "  " + "  ".join(cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths)))
        )
    coverage = phases.coverage_words(report)
    if coverage:
        lines.append(f"  {coverage}")
    return lines
