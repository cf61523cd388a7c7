"""Fixes tried in words: each remedy with the change a user would write, what torch did with it
(graphs, breaks, recompiles after; the target gone or moved), whether values, gradients, prints
and module state stayed, and the speedup; then the targets no remedy removed, with the rewrite
torch documents. Laid out by `check`'s text report, the Markdown export and the app's fixes
screen alike."""

from __future__ import annotations

from playground.engine.report import Fix, FixAdvice, Report
from playground.engine.wording.line import BAD, CODE, DIM, GOOD, HEADING, HINT, WARN, Line

TITLE = "fixes tried"


def fix_lines(report: Report) -> tuple[Line, ...]:
    """Every remedy tried, best first, then the advice; () when the run tried none."""
    if not report.fixes and not report.fix_advice:
        return ()
    lines = [Line.of(f"{TITLE} ({len(report.fixes)}, best first; your file unchanged):", tag=HEADING)]
    for fix in report.fixes:
        lines += one_fix(fix)
    for advice in report.fix_advice:
        lines += advice_lines(advice)
    return tuple(lines)


def outcome_words(fix: Fix) -> tuple[str, str]:
    """The remedy's result in a few words and its tag: what it removed, or its error."""
    if fix.after is None or fix.error:
        return f"error: {fix.error or 'no report'}", BAD
    after = fix.after
    counts = f"graphs {after.graph_count}  breaks {after.graph_break_count}  recompiles {after.recompile_count}"
    if fix.removed and fix.target.line in fix.moved_to:
        gone = "left a break of another kind on its line"
    elif fix.removed and fix.moved_to:
        gone = f"moved it to line {', '.join(str(n) for n in fix.moved_to)}"
    else:
        gone = "removed it" if fix.removed else "did not remove it"
    tag = GOOD if fix.removed and fix.equivalence in ("ok", "rounding") else WARN
    return f"{gone}; {counts}", tag


def kept_words(fix: Fix) -> tuple[str, str]:
    """What the remedy kept of the code's behaviour: values and gradients, prints, module state."""
    if fix.after is None or fix.error:
        return "", ""
    parts = [f"values and gradients {fix.equivalence}" + (f" ({fix.verdict})" if fix.verdict else "")]
    bad = fix.equivalence not in ("ok", "rounding")
    if fix.prints:
        parts.append(f"prints {fix.prints}")
        bad = bad or fix.prints != "same"
    if fix.state == "differs":
        parts.append("module state differs")
        bad = True
    if fix.speedup is not None:
        parts.append(f"speedup {fix.speedup:.2f}x")
    return "; ".join(parts), BAD if bad else GOOD


def one_fix(fix: Fix) -> list[Line]:
    """One remedy: its heading (target, mechanism, result), the change, what it kept, its note."""
    result, tag = outcome_words(fix)
    lines = [Line.of(f"{fix.target.label()}: ", (fix.remedy, CODE), " ", (result, tag))]
    for text in fix.change.splitlines():
        lines.append(Line.of((text, CODE), depth=1))
    kept, kept_tag = kept_words(fix)
    if kept:
        lines.append(Line.of((kept, kept_tag), depth=1))
    if fix.note:
        lines.append(Line.of((fix.note, DIM), depth=1))
    return lines


def advice_lines(advice: FixAdvice) -> list[Line]:
    return [
        Line.of(f"{advice.target.label()}: ", ("no remedy removed it", BAD), f" ({advice.why})"),
        Line.of("rewrite: ", (advice.rewrite, HINT), depth=1),
    ]
