"""A program's compared calls against its eager reference's, from the compiled run's side: the
common prefix of the two runs' calls (matched by their place in the program), each callable's
outputs and the grads of the program's own backward() calls compared leaf by leaf, and its
timings (program_timings.py). The records are program_reference.py's. Worker-side.

There is no float64 run of a whole program, so a value outside the tolerance is "differs",
never "within rounding".
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from playground.engine.program import callable_key
from playground.engine.report import Comparison, CompiledCallable, Equivalence, Timings
from playground.engine.report.equivalence import VERDICTS
from playground.engine.wording.line import plural
from playground.worker.run.compare.equivalence import verdict_of
from playground.worker.run.compare.value_walk import compare_values
from playground.worker.run.programs.made import Made
from playground.worker.run.programs.program_reference import RECORD_BYTES, STANCE, ProgramCall, ProgramGrads, Recorder
from playground.worker.run.programs.program_timings import timings_of


@dataclass
class Compared:
    """Each section's equivalence and timings, and the totals' equivalence."""

    equivalence: dict[int, Equivalence]
    timings: dict[int, Timings]
    total: Equivalence | None
    notes: list[str]


def compare(made: list[Made], mine: Recorder, eager_records: list[Any], eager_note: str) -> Compared:
    """The compiled run's calls (and the grads of its backward() calls) against the
    reference's, over the common prefix of the two runs' compared calls."""
    names = [m.name for m in made]
    key = {m.index: callable_key(m.name, m.index, names) for m in made}
    notes: list[str] = []
    ours = sorted((c for c in mine.calls if isinstance(c, ProgramCall)), key=lambda c: c.seq)
    theirs = sorted((c for c in eager_records if type(c).__name__ == "ProgramCall"), key=lambda c: c.seq)
    common = _common_prefix(ours, theirs, eager_note, notes)
    outputs: dict[int, list[Comparison]] = {}
    for a, b in zip(ours[:common], theirs[:common], strict=True):
        if a.recorded and b.recorded:
            entries = compare_values(b.out, a.out, a.call, None)
            outputs.setdefault(a.index, []).extend(replace(e, verdict=e.verdict or verdict_of(e)) for e in entries)
    grads = _grads(
        [g for g in mine.calls if isinstance(g, ProgramGrads)],
        [g for g in eager_records if type(g).__name__ == "ProgramGrads"],
        ours[common - 1].seq if common else 0,
    )
    equivalence: dict[int, Equivalence] = {}
    all_out: list[Comparison] = []
    all_grads: list[Comparison] = []
    for m in made:
        out, grad = outputs.get(m.index, []), grads.get(m.index, [])
        if not out and not grad:
            continue
        equivalence[m.index] = _equivalence(out, grad, _compared_note(m, out, grad, mine))
        all_out += [replace(e, name=f"{key[m.index]}: {e.name}") for e in out]
        all_grads += [replace(e, name=f"{key[m.index]}: {e.name}") for e in grad]
    total_note = "; ".join([*notes, *_later_note(made, mine)])
    total = _equivalence(all_out, all_grads, total_note) if all_out or all_grads else None
    timings = {m.index: t for m in made if (t := timings_of(m, ours[:common], theirs[:common])) is not None}
    return Compared(equivalence, timings, total, notes)


def _compared_note(m: Made, out: list[Comparison], grad: list[Comparison], mine: Recorder) -> str:
    """How many of the callable's calls were compared, and why not the others."""
    note = f"{plural(len({e.call for e in out}), 'call')} compared"
    if out and not grad and all(e.dtype == "NoneType" for e in out):
        # `identical` is true of None, and says nothing of the call's effects.
        note += ", each returned None: what its calls changed in place (an optimizer step's parameters) is not compared"
    if grad:
        note += f", grads of {plural(len({e.call for e in grad}), 'backward()', 'backward()s')}"
    skipped = mine.skipped.get(m.index, 0)
    if skipped:
        note += (
            f"; {skipped} call(s) of the first {mine.budget} not compared: their outputs came past the "
            f"{RECORD_BYTES // 2**20} MiB of outputs a run keeps for the comparison"
        )
    later = mine.per_callable.get(m.index, 0) - mine.budget
    if later > 0:
        note += (
            f"; its {plural(later, 'later call')} not compared (the first {mine.budget} of each callable are"
            f"{_why(mine)}: --compare-calls N for more)"
        )
    return note


def _later_note(made: list[Made], mine: Recorder) -> list[str]:
    """The whole run's word on the calls past each callable's compared ones (each section's
    own note says its share): the top-level verdict covers only the compared calls."""
    later = sum(max(mine.per_callable.get(m.index, 0) - mine.budget, 0) for m in made)
    if later <= 0:
        return []
    return [
        f"{plural(later, 'later call')} of compiled callables not compared (the first {mine.budget} "
        f"of each callable are{_why(mine)}: --compare-calls N for more)"
    ]


def _why(mine: Recorder) -> str:
    return f", {mine.fitted}" if mine.fitted else ""


def _common_prefix(ours: list[ProgramCall], theirs: list[ProgramCall], eager_note: str, notes: list[str]) -> int:
    """How many compared calls the two runs made alike (the same callable's same call, at the
    same place among the program's calls)."""
    common = 0
    for a, b in zip(ours, theirs, strict=False):
        if (a.seq, a.index, a.name, a.call) != (b.seq, b.index, b.name, b.call):
            # The same place, another call: they parted there; else somewhere before the sooner.
            where = f"at call {a.seq}" if a.seq == b.seq else f"before call {min(a.seq, b.seq)}"
            notes.append(
                f"the compiled and the eager run parted {where}: compiled made "
                f"{a.name}'s call {a.call} at {a.seq}, eager {b.name}'s call {b.call} at {b.seq}; "
                f"the first {plural(common, 'call')} compared"
            )
            return common
        common += 1
    if len(ours) != len(theirs):
        longer, shorter = ("compiled", "eager") if len(ours) > len(theirs) else ("eager", "compiled")
        why = f" ({eager_note})" if eager_note else ""
        notes.append(
            f"the {longer} run made {max(len(ours), len(theirs))} of the calls to compare, the {shorter} "
            f"{min(len(ours), len(theirs))}{why}: the first {common} compared"
        )
    return common


def _grads(ours: list[ProgramGrads], theirs: list[ProgramGrads], last: int) -> dict[int, list[Comparison]]:
    """Each backward() after a call of the common prefix (`last`: the place of its last call),
    per compiled module: its parameters' grads."""
    found: dict[int, list[Comparison]] = {}
    for a, b in zip(ours, theirs, strict=False):
        if a.after_call != b.after_call or a.after_call > last:
            break
        for index, mine in a.grads.items():
            ref = b.grads.get(index)
            if ref is None:
                continue
            entries = compare_values(ref, mine, a.seq, None, root="grad")
            found.setdefault(index, []).extend(replace(e, verdict=e.verdict or verdict_of(e)) for e in entries)
    return found


def _equivalence(entries: list[Comparison], grads: list[Comparison], note: str) -> Equivalence:
    compared = [e for e in (*entries, *grads) if e.compared]
    worst = max((VERDICTS.index(e.verdict) for e in compared if e.verdict in VERDICTS), default=None)
    return Equivalence(
        ok=bool(compared) and all(e.ok for e in compared),
        outputs=tuple(entries),
        grads=tuple(grads),
        note=note,
        verdict=VERDICTS[worst] if worst is not None else "",
        reference=f"the same program under {STANCE}, in a process of its own",
        rule="each leaf within the tolerance of its dtype; a program has no float64 reference, "
        "so a value outside it differs",
    )


def with_comparison(section: CompiledCallable, compared: Compared) -> CompiledCallable:
    return replace(
        section,
        equivalence=compared.equivalence.get(section.index),
        timings=compared.timings.get(section.index),
    )
