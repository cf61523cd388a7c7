"""The guard what-if in words: what torch's unsafe guard switches would save the timed call, and
the risk each takes, named from what it dropped and from torch's own docstrings, with what the
run measured. Laid out by the Timing pane, `check`'s text report and the Markdown export."""

from __future__ import annotations

from playground.engine.report import GuardWhatIf, Report
from playground.engine.wording.line import BAD, CODE, DIM, GOOD, HEADING, WARN, Line, plural

TITLE = "guard what-if"
#: Sources named in a risk line before the rest are counted.
SOURCES_SHOWN = 4

#: What each filter the what-if applies drops, and the risk it takes (torch.compiler's docstrings:
#: "unsafe"; fine for code that never modifies what it drops).
_DROPS = {
    "skip_guard_on_inbuilt_nn_modules_unsafe": "torch's own nn modules' guards",
    "skip_guard_on_globals_unsafe": "guards on globals",
}
_RISKS = {
    "skip_guard_on_inbuilt_nn_modules_unsafe": (
        "if an attribute, parameter or submodule of {what} is replaced after compile, the compiled code "
        "still runs and can silently give wrong results (torch's docstring: fine when the model code "
        "never modifies the attributes of torch's own modules)"
    ),
    "skip_guard_on_globals_unsafe": (
        "if {what} is rebound after compile, the compiled code keeps what it saw and can silently give "
        "wrong results (torch's docstring: fine when the globals do not change)"
    ),
}
_STANCE_RISK = (
    "a call that should recompile (a new shape, dtype or Python value) runs a cached graph instead and "
    "can silently give wrong results (torch's docstring: only once warm-up has seen every input kind)"
)


def what_if_lines(report: Report) -> tuple[Line, ...]:
    """The what-if's lines under its heading; () when the run did not ask for it."""
    what = report.guard_what_if
    if what is None:
        return ()
    out = [
        Line.of(
            f"{TITLE}: torch's unsafe guard switches on call {what.timed_call or '?'}",
            (" (measured on request once the run's own figures were taken; never applied to the run)", DIM),
            tag=HEADING,
        )
    ]
    out += _filter_lines(what)
    out += _stance_lines(what)
    if what.note:
        out.append(Line.of(f"not measured further: {what.note}", tag=WARN, depth=1))
    return tuple(out)


def _us(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value / 1e3:.2f} ms" if value >= 1e3 else f"{value:.1f} us"


def _change(before: float | None, after: float | None) -> str:
    return f"{_us(before)} -> {_us(after)}"


def _named(sources: tuple[str, ...], dropped: int) -> str:
    """ "self[0], self[1] and 2 more" for a risk line."""
    shown = ", ".join(sources[:SOURCES_SHOWN])
    more = len(sources) - SOURCES_SHOWN
    return shown + (f" and {more} more" if more > 0 else "") if shown else plural(dropped, "guarded value")


def _filter_lines(what: GuardWhatIf) -> list[Line]:
    if not what.filter or not what.filter_guards:
        return []
    head = Line.of("guard filter ", (f"torch.compiler.{what.filter}", CODE), f" for a {what.target}: ", depth=1)
    if not what.dropped:
        words = (
            f"dropped none of the {plural(what.filter_guards, 'guard')} Dynamo handed it: "
            "nothing saved, nothing risked here"
        )
        return [Line(head.pieces + ((words, ""),), depth=1), *_preview_lines(what)]
    drops = _DROPS.get(what.filter, "guards")
    out = [Line(head.pieces + ((f"dropped {what.dropped} of {what.filter_guards} ({drops})", ""),), depth=1)]
    if what.guards_after is not None:
        out.append(
            Line.of(f"timed call's entry {what.guards_before} -> {plural(what.guards_after, 'leaf guard')}", depth=2)
        )
        out.append(
            Line.of(_noisy("guard check", what.check_us_before, what.check_us_after, what.check_noise_us), depth=2)
        )
        lookup = _noisy("cache lookup (profiler)", what.lookup_us_before, what.lookup_us_after, what.lookup_noise_us)
        out.append(Line.of(lookup, depth=2))
        out.append(
            Line.of(
                _noisy("compiled call", what.call_us_before, what.call_us_after, what.call_noise_us), tag=DIM, depth=2
            )
        )
    if what.entries_after is not None and what.entries_after != what.entries_before:
        out.append(
            Line.of(
                f"the calls made {plural(what.entries_after, 'cache entry', 'cache entries')} under the filter, "
                f"the run {what.entries_before}: the filter dropped a guard that recompiled, or inputs() changed "
                "the target between calls (remade here with their arguments, on the target as the run left it)",
                tag=WARN,
                depth=2,
            )
        )
    if what.outputs_agree is not None:
        out.append(_outputs_line(what))
    risk = _RISKS.get(what.filter, "what the dropped guards checked may change unseen")
    out.append(Line.of("risk: " + risk.format(what=_named(what.dropped_sources, what.dropped)), tag=WARN, depth=2))
    return out + _preview_lines(what)


def _noisy(what: str, before: float | None, after: float | None, noise: float | None) -> str:
    """ "guard check 2.7 us -> 1.8 us (noise ±0.2 us)", or "(within this machine's noise, ±…)"
    when the change is no larger than the blocks' spread."""
    change = f"{what} {_change(before, after)}"
    if before is None or after is None or noise is None:
        return change
    if abs(after - before) <= noise:
        return f"{change} (within this machine's noise, ±{_us(noise)})"
    return f"{change} (noise ±{_us(noise)})"


def _outputs_line(what: GuardWhatIf) -> Line:
    call = f"call {what.timed_call}'s inputs" if what.timed_call else "the timed call's inputs"
    if what.outputs_agree:
        return Line.of(f"outputs under the filter equal the outputs without it on {call}", tag=GOOD, depth=2)
    diff = f" (max abs diff {what.output_max_abs:.3g})" if what.output_max_abs else ""
    return Line.of(f"outputs under the filter DIFFER from the outputs without it on {call}{diff}", tag=BAD, depth=2)


def _preview_lines(what: GuardWhatIf) -> list[Line]:
    others = [p for p in what.preview if p.filter != what.filter]
    if not others:
        return []
    shown = ", ".join(f"{p.filter} {p.drops}" for p in others)
    return [Line.of(f"of the same {what.filter_guards}, torch's other filters would drop: {shown}", tag=DIM, depth=2)]


def _stance_lines(what: GuardWhatIf) -> list[Line]:
    if what.stance_error:
        return [
            Line.of(
                ("torch.compiler.set_stance(skip_guard_eval_unsafe=True)", CODE),
                f": torch refused the timed call under it ({what.stance_error})",
                tag=WARN,
                depth=1,
            )
        ]
    if what.stance_lookup_us is None and what.stance_call_us is None:
        return []
    if what.entries_before == 1:
        checked = "one cache entry, so no guard is checked"
    else:
        checked = f"{what.entries_before} cache entries, so only the guards that tell them apart are checked"
    out = [
        Line.of(
            ("torch.compiler.set_stance(skip_guard_eval_unsafe=True)", CODE),
            f", no recompile: {checked}",
            depth=1,
        ),
        Line.of(
            f"cache lookup {_change(what.lookup_us_before, what.stance_lookup_us)} (profiler); "
            f"compiled call {_change(what.call_us_before, what.stance_call_us)}",
            depth=2,
        ),
    ]
    measured = ""
    if what.stance_probe_stale is True:
        measured = (
            "; measured on this torch: a function compiled for flag=True, called with flag=False "
            "under the stance, returned flag=True's result"
        )
    elif what.stance_probe_stale is False:
        measured = "; on this torch the probe (flag=True compiled, flag=False called) still returned the right result"
    out.append(Line.of(f"risk: {_STANCE_RISK}{measured}", tag=WARN, depth=2))
    return out
