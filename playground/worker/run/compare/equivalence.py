"""The equivalence phase: each call's outputs, mutated inputs, gradients and changed state, the
compiled run against the eager reference's, as one `Equivalence` value. Worker-side.

A value outside the tolerance is not yet a verdict: summing thousands of float32 values in
another order is not a bug. Unless the snippet states its own TOLERANCE, such values are judged
again as PyTorch's own accuracy harness judges compiled models (torch._dynamo.utils.same with an
fp64 reference): against a float64 run of the same calls, the compiled error must stay within
K times eager's own error, plus a floor. The float64 run is made only then (reference.py).

Both steps assume one function: the three processes built the same inputs, state and module
values from the same bytes (built.py says what each built). When one did not, its values are
not judged by either step, and the equivalence says what differs. And no value is "within
rounding" when eager's own error against float64 is more than rounding explains.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import torch

from playground.engine.report import VERDICTS, Comparison, Equivalence
from playground.worker.run.compare import gradients
from playground.worker.run.compare.reference import SideResult
from playground.worker.run.compare.rows import row
from playground.worker.run.compare.tensor_diff import compare_tensors
from playground.worker.run.compare.tolerances import (
    FLOOR,
    HARNESS_TOL,
    K_DEFAULT,
    K_SMALL_OR_HALF,
    SMALL_NUMEL,
    tolerance_for,
    validate_tolerance,
)
from playground.worker.run.compare.value_walk import compare_values
from playground.worker.run.spine import built
from playground.worker.run.spine.calls import CallRecord
from playground.worker.run.spine.context import RunContext
from playground.worker.run.spine.leaves import leaves as leaves_of
from playground.worker.run.spine.leaves import plain
from playground.worker.run.spine.loading import Loaded
from playground.worker.run.spine.module_state import StateTracker

#: Eager's own RMS error against float64, over the float64 values' RMS, past which rounding no
#: longer explains it (torch._dynamo.utils.same's loose tolerance): the float64 run, or eager's,
#: computes another function (a value the snippet reads from outside: a file, a clock, a pid).
LOOSE = 4e-2
RULE = (
    "outside the tolerance, a value is judged as PyTorch's accuracy harness judges compiled models: "
    f"within rounding when it is within atol=rtol={HARNESS_TOL:g} of eager, or else, against a float64 run "
    f"of the same calls, compiled's RMS error <= k x eager's own + {FLOOR:g} "
    f"(k = {K_DEFAULT:g}; {K_SMALL_OR_HALF:g} for float16/bfloat16 and tensors under {SMALL_NUMEL} elements), "
    f"when eager's own error is what rounding explains (its RMS error <= {LOOSE:g} x the float64 values' RMS, "
    "or 10 x the dtype's rtol when looser) and every process built the same inputs, state and module values"
)
#: Why processes built from the same bytes and seeds differ.
DIFFERENT_BUILDS = (
    "module-level code or inputs() that reads the process (its pid, the time, an unseeded "
    "generator, the environment, a file) gives each process its own; a plain one-process "
    "program would not see it"
)


@dataclass
class _Leaf:
    """A compared tensor leaf whose direct comparison failed: what re-judging it needs."""

    group: str  # "outputs" | "grads" | "state"
    position: int
    eager: torch.Tensor
    compiled: torch.Tensor
    fp64: Callable[[SideResult], torch.Tensor | None]


def check(
    ctx: RunContext,
    records: tuple[CallRecord, ...],
    eager: SideResult,
    tracker: StateTracker | None,
    loaded: Loaded,
    float64: Callable[[], SideResult],
) -> Equivalence:
    override, tolerance_notes = validate_tolerance(loaded.module.__dict__.get("TOLERANCE"))
    ctx.notes += tolerance_notes
    ctx.progress("equivalence", "comparing values")
    notes: list[str] = []
    groups, leaves = _compare_calls(records, eager, tracker, override, notes)
    here = _built_here(tracker, records)
    eager_differs = _differences(here, eager, "the eager reference's process")
    reference = "eager reference: its own process, the same calls from a fresh load"
    rule = ""
    judged = [leaf for leaf in leaves if not groups[leaf.group][leaf.position].ok]
    if eager_differs:
        words = f"the processes built different values ({'; '.join(eager_differs)}): {DIFFERENT_BUILDS}"
        notes.append(words)
        reference += "; it built other values than the compiled run's process"
        if judged and override is None:
            reference += ": the float64 rule not applied"
            judged = []
    if judged and override is None:
        rule = RULE
        judged = _outside_harness_tolerance(groups, judged)
    if judged and override is None:
        reference += _float64_judged(groups, judged, float64(), here, notes)
    elif judged:
        reference += "; TOLERANCE given: the float64 rule not applied"
    return _verdict(groups, leaves, notes, reference, rule)


def _compare_calls(
    records: tuple[CallRecord, ...],
    eager: SideResult,
    tracker: StateTracker | None,
    override: dict[str, float] | None,
    notes: list[str],
) -> tuple[dict[str, list[Comparison]], list[_Leaf]]:
    """Each call's outputs, mutated inputs, gradients and changed state against the eager
    reference's, leaf by leaf, under the tolerance alone."""
    groups: dict[str, list[Comparison]] = {"outputs": [], "grads": [], "state": []}
    leaves: list[_Leaf] = []
    initial_state = tracker.initial if tracker is not None else {}
    eager_state = dict(initial_state)
    compiled_state = dict(initial_state)
    for rec in records:
        ref = eager.calls.get(rec.index)
        if ref is None:
            notes.append(f"no eager reference for call {rec.index}: {_missing(eager)}")
            continue
        mine = rec.side
        _add(
            groups,
            leaves,
            "outputs",
            compare_values(ref.out, mine.out, rec.index, override),
            ref.out,
            mine.out,
            "out",
            lambda r, i=rec.index: _leaf_of(r, i, "out"),
        )
        if ref.mutated or mine.mutated:
            _add(
                groups,
                leaves,
                "outputs",
                compare_values(ref.args, mine.args, rec.index, override, root="input (mutated)"),
                ref.args,
                mine.args,
                "input (mutated)",
                lambda r, i=rec.index: _leaf_of(r, i, "args"),
            )
        _compare_grads(groups, leaves, rec.index, ref, mine, override, notes)
        eager_state.update(ref.state)
        compiled_state.update(mine.state)
        for name in sorted({*ref.state, *mine.state}):
            e, c = eager_state.get(name), compiled_state.get(name)
            if e is None or c is None:
                continue
            entry = compare_tensors(name, e, c, rec.index, override)
            _add_one(groups, leaves, "state", entry, e, c, _state_of(name, rec.index))
    return groups, leaves


def _outside_harness_tolerance(groups: dict[str, list[Comparison]], judged: list[_Leaf]) -> list[_Leaf]:
    """The values outside the tolerance that are outside the accuracy harness's too; the rest
    are marked equal within it."""
    outside = []
    for leaf in judged:
        rounded = _within_harness_tolerance(groups[leaf.group][leaf.position], leaf)
        if rounded is None:
            outside.append(leaf)
        else:
            groups[leaf.group][leaf.position] = rounded
    return outside


def _float64_judged(
    groups: dict[str, list[Comparison]],
    judged: list[_Leaf],
    wide: SideResult,
    here: built.Built | None,
    notes: list[str],
) -> str:
    """Judge the values still outside against the float64 reference, when it built the same
    values; what the reference line adds about it."""
    wide_differs = _differences(here, wide, "the float64 reference's process")
    if wide_differs:
        why = f"it built other values ({'; '.join(wide_differs)}): {DIFFERENT_BUILDS}"
        notes.append(f"no float64 judgement, so values outside the tolerance stay 'differs': {why}")
        return "; no float64 judgement: the float64 reference built other values"
    if wide.calls and wide.error is None:
        for leaf in judged:
            groups[leaf.group][leaf.position] = _judge(groups[leaf.group][leaf.position], leaf, wide)
        return f"; float64 reference run for {len(judged)} value(s) outside the tolerance"
    why = wide.error.message if wide.error is not None else (wide.note or "it made no call")
    notes.append(f"no float64 reference, so values outside the tolerance stay 'differs': {why}")
    return f"; no float64 reference: {why}"


def _verdict(
    groups: dict[str, list[Comparison]], leaves: list[_Leaf], notes: list[str], reference: str, rule: str
) -> Equivalence:
    """Every comparison with its verdict, and the run's: the worst of them."""
    for leaf in leaves:
        entry = groups[leaf.group][leaf.position]
        if not entry.ok and not entry.worst:
            groups[leaf.group][leaf.position] = replace(entry, worst=_worst(leaf.eager, leaf.compiled, None))
    for entries in groups.values():
        # A verdict already given (a value one side lacks, the float64 rule) stands.
        entries[:] = [e if e.verdict else replace(e, verdict=verdict_of(e)) for e in entries]
    compared = [e for entries in groups.values() for e in entries if e.compared]
    verdict = max((e.verdict for e in compared if e.verdict), key=VERDICTS.index, default="")
    ok = all(e.ok for entries in groups.values() for e in entries)
    # "no gradients" is news only when no call gave any.
    note = "; ".join(dict.fromkeys(n for n in notes if not (groups["grads"] and n.startswith("no gradient"))))
    return Equivalence(
        ok=ok,
        outputs=tuple(groups["outputs"]),
        grads=tuple(groups["grads"]),
        note=note,
        verdict=verdict,
        state=tuple(groups["state"]),
        reference=reference,
        rule=rule,
    )


def _built_here(tracker: StateTracker | None, records: tuple[CallRecord, ...]) -> built.Built | None:
    """What the run's child built: its tracker's digests at load, each call's inputs."""
    if tracker is None or tracker.built is None:
        return None
    mine = built.Built(tracker.built.values, tracker.built.state)
    mine.inputs = {rec.index: built.of_inputs(rec.snapshot) for rec in records}
    return mine


def _differences(mine: built.Built | None, other: SideResult, who: str) -> list[str]:
    if mine is None or other.built is None:
        return []
    return built.differences(mine, other.built, who)


def _missing(eager: SideResult) -> str:
    if eager.error is not None:
        return f"it failed: {eager.error.message}"
    if not eager.complete:
        return eager.note or "its process ended early"
    return f"it made {len(eager.calls)} call(s): inputs() gave it other calls (is it deterministic?)"


def _compare_grads(
    groups: dict[str, list[Comparison]],
    leaves: list[_Leaf],
    index: int,
    ref: Any,
    mine: Any,
    override: Any,
    notes: list[str],
) -> None:
    if ref.grads is None and mine.grads is None:
        notes.append(ref.grad_note or mine.grad_note or "no gradients")
        return
    if ref.grads is None or mine.grads is None:
        side = "compiled" if mine.grads is None else "eager"
        why = (mine.grad_note if mine.grads is None else ref.grad_note) or "no gradient"
        groups["grads"].append(_bad("loss", index, f"{side} output gives no gradient: {why}"))
        return
    for entry in gradients.compare_grads(ref.grads, mine.grads, index, override):
        name = entry.name.removesuffix(".grad")
        e, c = ref.grads.get(name), mine.grads.get(name)
        _add_one(groups, leaves, "grads", entry, e, c, lambda r, i=index, n=name: _grad_of(r, i, n))


def _bad(name: str, call: int, note: str) -> Comparison:
    """A row for a value one side lacks."""
    return row(name, call, False, note, verdict="differs")


def _add(
    groups: dict[str, list[Comparison]],
    leaves: list[_Leaf],
    group: str,
    entries: list[Comparison],
    eager_value: Any,
    compiled_value: Any,
    root: str,
    fp64_root: Callable[[SideResult], Any],
) -> None:
    """Entries of one compared value, with the tensors behind each failing leaf kept for the
    float64 rule (found again by path: compare_values names leaves as `leaves` does)."""
    eager_leaves = dict(leaves_of(eager_value, root))
    compiled_leaves = dict(leaves_of(compiled_value, root))
    for entry in entries:
        path = entry.name

        def fp64(r: SideResult, path: str = path) -> torch.Tensor | None:
            value = fp64_root(r)
            return None if value is None else dict(leaves_of(value, root)).get(path)

        _add_one(groups, leaves, group, entry, eager_leaves.get(path), compiled_leaves.get(path), fp64)


def _add_one(
    groups: dict[str, list[Comparison]],
    leaves: list[_Leaf],
    group: str,
    entry: Comparison,
    e: Any,
    c: Any,
    fp64: Callable[[SideResult], torch.Tensor | None],
) -> None:
    groups[group].append(entry)
    if not entry.ok and entry.compared and _tensors(e, c):
        leaves.append(_Leaf(group, len(groups[group]) - 1, e, c, fp64))


def _tensors(e: Any, c: Any) -> bool:
    return isinstance(e, torch.Tensor) and isinstance(c, torch.Tensor) and e.shape == c.shape and not e.is_nested


def _leaf_of(r: SideResult, index: int, what: str) -> Any:
    call = r.calls.get(index)
    return None if call is None else getattr(call, what)


def _grad_of(r: SideResult, index: int, name: str) -> torch.Tensor | None:
    call = r.calls.get(index)
    return None if call is None or call.grads is None else call.grads.get(name)


def _state_of(name: str, index: int) -> Callable[[SideResult], torch.Tensor | None]:
    def find(r: SideResult) -> torch.Tensor | None:
        value = None
        for i in sorted(r.calls):
            if i > index:
                break
            value = r.calls[i].state.get(name, value)
        return value

    return find


def _within_harness_tolerance(entry: Comparison, leaf: _Leaf) -> Comparison | None:
    """The harness's first step: close at atol=rtol=HARNESS_TOL (or the dtype's own, when looser).
    The entry judged within rounding, or None when the leaf is not that close."""
    if not (leaf.eager.is_floating_point() or leaf.eager.is_complex()):
        return None
    try:
        e, c = plain(leaf.eager), plain(leaf.compiled).to(leaf.eager.dtype)
        tol = max(HARNESS_TOL, entry.atol or 0.0, entry.rtol or 0.0)
        close = bool(torch.allclose(c, e, atol=tol, rtol=tol, equal_nan=True))
    except Exception:  # noqa: BLE001 - what cannot be compared this way goes to float64
        return None
    if not close:
        return None
    return replace(
        entry,
        ok=True,
        verdict="within rounding",
        worst=_worst(leaf.eager, leaf.compiled, None),
        note=_join(entry.note, f"within atol=rtol={tol:g} of eager, the accuracy harness's tolerance"),
    )


def _judge(entry: Comparison, leaf: _Leaf, wide: SideResult) -> Comparison:
    """The float64 rule on one leaf outside the tolerance: the entry judged."""
    ref = leaf.fp64(wide)
    if not isinstance(ref, torch.Tensor) or ref.shape != leaf.eager.shape:
        return replace(entry, note=_join(entry.note, "no float64 value to judge it by"))
    e, c, r = (plain(t).to(torch.float64) for t in (leaf.eager, leaf.compiled, ref))
    if not (e.is_floating_point() or e.is_complex()) or not (leaf.eager.is_floating_point() or leaf.eager.is_complex()):
        return entry  # integers and booleans are exact: no rounding to forgive
    eager_err, compiled_err = _rmse(r, e), _rmse(r, c)
    scale = _rmse(torch.zeros_like(r), r)
    loose = max(LOOSE, 10 * tolerance_for(leaf.eager.dtype, None)[0])
    if not (math.isfinite(eager_err) and eager_err <= loose * scale + FLOOR):
        words = (
            f"eager's own RMS error vs float64 {eager_err:.3g} is more than rounding explains "
            f"(> {loose:g} x the float64 values' RMS {scale:.3g}): eager and float64 compute different functions"
        )
        return replace(
            entry,
            verdict="differs",
            eager_err=_finite(eager_err),
            compiled_err=_finite(compiled_err),
            worst=_worst(leaf.eager, leaf.compiled, ref),
            note=_join(entry.note, words),
        )
    small = leaf.eager.dtype in (torch.float16, torch.bfloat16) or leaf.eager.numel() < SMALL_NUMEL
    k = K_SMALL_OR_HALF if small else K_DEFAULT
    within = math.isfinite(compiled_err) and math.isfinite(eager_err) and compiled_err <= k * eager_err + FLOOR
    sign = "<=" if within else ">"
    words = f"compiled's RMS error vs float64 {compiled_err:.3g} {sign} {k:g} x eager's own {eager_err:.3g} + {FLOOR:g}"
    return replace(
        entry,
        ok=True if within else entry.ok,
        verdict="within rounding" if within else "differs",
        eager_err=_finite(eager_err),
        compiled_err=_finite(compiled_err),
        worst=_worst(leaf.eager, leaf.compiled, ref),
        note=_join(entry.note, words),
    )


def _rmse(ref: torch.Tensor, value: torch.Tensor) -> float:
    if ref.numel() == 0:
        return 0.0
    return float(torch.sqrt(torch.mean(torch.abs(ref - value) ** 2)))


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def _worst(eager: torch.Tensor, compiled: torch.Tensor, ref: torch.Tensor | None) -> str:
    """Where eager and compiled differ most, and the values there (float64's too)."""
    try:
        e, c = plain(eager), plain(compiled)
        if e.numel() == 0:
            return ""
        wide = torch.complex128 if (e.is_complex() or c.is_complex()) else torch.float64
        diff = torch.abs(e.to(wide) - c.to(wide)).nan_to_num(nan=math.inf)
        flat = int(torch.argmax(diff.reshape(-1)))
        where = [int(i) for i in torch.unravel_index(torch.tensor(flat), e.shape)] if e.dim() else []
        at = tuple(where) if where else ()
        words = f"at {list(at)}: compiled {_num(c[at])} vs eager {_num(e[at])}"
        if ref is not None:
            words += f" (float64 {_num(plain(ref)[at])})"
        return words
    except Exception:  # noqa: BLE001 - where is a courtesy; never fail the check over it
        return ""


def _num(t: torch.Tensor) -> str:
    value = t.item()
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def _join(a: str, b: str) -> str:
    return f"{a}; {b}" if a else b


def verdict_of(entry: Comparison) -> str:
    """A leaf's verdict from its own numbers alone (the float64 rule gives 'within rounding')."""
    if not entry.compared:
        return ""
    if not entry.ok:
        return "differs"
    return "identical" if entry.max_abs in (None, 0, 0.0) else "within tolerance"
