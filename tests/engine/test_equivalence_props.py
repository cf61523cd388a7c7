"""Property-based tests of the equivalence comparator over generated nested outputs.

Pure: no worker. The comparator sees whatever a snippet returns, so the properties are the
ones a hostile snippet tests: equal values always compare ok, one perturbed element is always
caught at its own path, nothing ever raises, and every report survives the worker's JSON step.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import math
from typing import Any

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from playground.engine.lines import sanitize as _sanitize
from playground.engine.report import Comparison
from playground.worker.run.compare import tolerances, value_walk
from playground.worker.run.compare.gradients import compare_grads
from playground.worker.run.compare.tolerances import validate_tolerance
from playground.worker.run.compare.value_walk import compare_values
from playground.worker.run.spine.backward import default_loss
from playground.worker.run.spine.leaves import leaves

PROPS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
KEYS = {"name", "call", "dtype", "max_abs", "max_rel", "atol", "rtol", "ok", "compared", "note"}


@dataclasses.dataclass
class Out:
    y: Any
    z: Any


Pair = collections.namedtuple("Pair", "a b")


class EqRaises:
    """== raises and repr raises; the state lives in attributes."""

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        raise TypeError("no == for you")

    __hash__ = object.__hash__

    def __repr__(self) -> str:
        raise ValueError("no repr either")


class EqTensor:
    """== returns a tensor, as a class that forwards == to its tensor does."""

    def __init__(self, value: torch.Tensor) -> None:
        self.value = value

    def __eq__(self, other: object) -> Any:
        return self.value == other.value  # type: ignore[attr-defined]

    __hash__ = object.__hash__


class Plain:
    """Default == is identity: two runs can never agree on it."""

    def __init__(self, value: Any) -> None:
        self.value = value


def _gen(n: int):
    yield n


# --- strategies --------------------------------------------------------------------------

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.complex64, torch.int64, torch.bool]
SHAPES = [(), (0,), (1,), (3,), (2, 3), (0, 2)]


@st.composite
def tensors(draw: st.DrawFn, dense: bool = False) -> torch.Tensor:
    """Small tensors of every dtype above, NaN/inf in places, some sparse; `dense`: strided, numel > 0."""
    dtype = draw(st.sampled_from(DTYPES))
    shape = draw(st.sampled_from([s for s in SHAPES if not dense or 0 not in s]))
    gen = torch.Generator().manual_seed(draw(st.integers(0, 2**16)))
    base = torch.randn(shape, generator=gen) * 10
    if dtype.is_complex:
        t = torch.complex(base, torch.randn(shape, generator=gen)).to(dtype)
    else:
        t = base.to(dtype) if dtype.is_floating_point else (base > 0 if dtype == torch.bool else base.round().to(dtype))
    if dtype.is_floating_point and t.numel() and draw(st.booleans()):
        # NaN and inf in place: equal on both sides, so they must compare equal.
        t.view(-1)[draw(st.integers(0, t.numel() - 1))] = draw(st.sampled_from([math.nan, math.inf, -math.inf]))
    layout = "strided" if dense else draw(st.sampled_from(["strided", "strided", "strided", "coo", "csr"]))
    if layout != "strided" and t.dim() == 2 and dtype in (torch.float32, torch.float64):
        t = t.to_sparse() if layout == "coo" else t.to_sparse_csr()
    return t


scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.complex_numbers(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
)

odd = st.one_of(
    st.integers(0, 9).map(_gen),
    st.integers(0, 9).map(lambda n: iter([n])),
    st.just(torch.ones(2, device="meta")),
    st.integers(0, 9).map(EqRaises),
    tensors().map(EqTensor),
    tensors().map(Plain),
)

values = st.recursive(
    st.one_of(tensors(), scalars, odd),
    lambda children: st.one_of(
        st.lists(children, max_size=3),
        st.lists(children, max_size=3).map(tuple),
        st.dictionaries(st.text(max_size=3), children, max_size=3),
        st.builds(Out, children, children),
        st.builds(Pair, children, children),
    ),
    max_leaves=8,
)


def twin(value: Any) -> Any:
    """An equal, independent copy: deepcopy refuses CSR tensors and generators."""
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, Out):
        return Out(twin(value.y), twin(value.z))
    if isinstance(value, Pair):
        return Pair(twin(value.a), twin(value.b))
    if isinstance(value, (list, tuple)):
        return type(value)(twin(v) for v in value)
    if isinstance(value, dict):
        return {k: twin(v) for k, v in value.items()}
    if isinstance(value, (EqRaises, EqTensor, Plain)):
        return type(value)(twin(value.value))
    if value_walk._iterator_kind(value) is not None:
        return _gen(0)
    return value


def assert_reportable(report: list[Comparison]) -> None:
    assert report, "every compared value gives at least one entry"
    for entry in report:
        assert KEYS <= set(entry.to_dict()), entry
        assert isinstance(entry.name, str) and isinstance(entry.ok, bool)
        assert entry.note.isprintable()
    json.dumps(_sanitize([entry.to_dict() for entry in report]), allow_nan=False)


# --- properties --------------------------------------------------------------------------


@PROPS
@given(values)
def test_a_value_against_its_copy_is_always_ok(value: Any) -> None:
    report = compare_values(value, twin(value), 1, None)
    assert_reportable(report)
    assert all(e.ok for e in report), [e for e in report if not e.ok]


def _perturbable(value: Any) -> list[tuple[str, torch.Tensor]]:
    return [
        (path, leaf)
        for path, leaf in leaves(value)
        if isinstance(leaf, torch.Tensor) and leaf.layout == torch.strided and not leaf.is_meta and leaf.numel()
    ]


def _perturb(t: torch.Tensor, index: int) -> None:
    flat = t.view(-1)
    v = flat[index].item()
    if t.dtype == torch.bool:
        flat[index] = not v
    elif isinstance(v, complex):
        flat[index] = complex(0.0 if not math.isfinite(abs(v)) else v.real + 1 + abs(v), v.imag)
    elif not math.isfinite(v):
        flat[index] = 0.0
    else:
        # A difference of at least 1 and at least |v|: beyond any dtype's default tolerance.
        flat[index] = v + 1 + abs(v)


@PROPS
@given(st.builds(Out, values, tensors(dense=True)), st.data())
def test_one_perturbed_element_is_caught_at_its_path(value: Any, data: st.DataObject) -> None:
    compiled = twin(value)
    targets = _perturbable(compiled)  # out.z at least; any nested tensor can be drawn
    path, tensor = data.draw(st.sampled_from(targets))
    _perturb(tensor, data.draw(st.integers(0, tensor.numel() - 1)))
    report = compare_values(value, compiled, 1, None)
    assert_reportable(report)
    failing = [e.name for e in report if not e.ok]
    assert failing == [path], report


@PROPS
@given(values, values)
def test_never_raises_on_unrelated_values(expected: Any, actual: Any) -> None:
    assert_reportable(compare_values(expected, actual, 3, {"atol": 0.1}))


@PROPS
@given(values)
def test_default_loss_sums_every_floating_leaf_that_requires_grad(value: Any) -> None:
    wanting = []
    for _, leaf in leaves(value):
        if isinstance(leaf, torch.Tensor) and leaf.is_floating_point() and not leaf.is_meta:
            leaf.requires_grad_(True)
            wanting.append(leaf)
    loss = default_loss(value, notes := [])
    if not wanting:
        assert loss is None
        return
    assert loss is not None and loss.requires_grad, notes
    loss.backward()
    assert all(t.grad is not None for t in wanting)


@PROPS
@given(st.dictionaries(st.text(max_size=6), st.one_of(scalars, st.lists(st.integers()))))
def test_tolerance_validation_never_raises_and_names_each_problem(value: dict[str, Any]) -> None:
    clean, notes = validate_tolerance(value)
    assert set(clean or {}) <= {"atol", "rtol"}
    assert len(notes) == len(value) - len(clean or {})
    assert tolerances.tolerance_for(torch.float32, value) >= (0.0, 0.0)


# --- the cases from the issue, spelled out -----------------------------------------------


def test_dataclass_outputs_compare_field_by_field() -> None:
    x = torch.ones(3)
    report = compare_values(Out(y=x * 2, z=x + 1), Out(y=x * 2, z=x + 1), 1, None)
    assert [(e.name, e.ok) for e in report] == [("out.y", True), ("out.z", True)]


def test_a_generator_is_not_compared_and_not_a_mismatch() -> None:
    (entry,) = compare_values(_gen(1), _gen(1), 1, None)
    assert entry.ok and entry.compared is False
    assert entry.note == "not compared: a generator"


@pytest.mark.parametrize(
    ("expected", "actual", "path", "words"),
    [
        ({"a": 1, "b": 2}, {"a": 1, "c": 2}, "out", "keys differ"),
        ([1, 2], [1, 2, 3], "out", "length 3 != eager 2"),
        ((torch.ones(1),), [torch.ones(1)], "out", "type list != eager tuple"),
        (Out(1, (2, None)), Out(1, (2, 0)), "out.z[1]", "type int != eager NoneType"),
        (
            Pair(torch.ones(2), 1),
            Pair(torch.ones(2, dtype=torch.float64), 1),
            "out.a",
            "dtype float64 != eager float32",
        ),
        ({"k": torch.ones(2, 2)}, {"k": torch.ones(2, 2).to_sparse_csr()}, "out['k']", "layout sparse_csr"),
        ([torch.ones(2)], [3.0], "out[0]", "tensor in eager only"),
    ],
)
def test_structural_differences_fail_at_the_path_that_names_them(
    expected: Any, actual: Any, path: str, words: str
) -> None:
    report = compare_values(expected, actual, 1, None)
    assert_reportable(report)
    bad = [e for e in report if not e.ok]
    assert [e.name for e in bad] == [path] and words in bad[0].note, report


def test_control_characters_in_values_are_escaped_in_notes() -> None:
    (entry,) = compare_values("\x1b]0;pwned\x07", "\x1b[2J", 1, None)
    assert not entry.ok and "\x1b" not in entry.note and "\\x1b" in entry.note


def test_a_huge_output_is_summed_up_not_listed() -> None:
    expected = [float(i) for i in range(5000)]
    actual = expected[:-1] + [-1.0]
    report = compare_values(expected, actual, 1, None)
    assert len(report) <= value_walk.MAX_LISTED + 2
    assert [e.name for e in report if not e.ok] == ["out[4999]"]


def test_sparse_gradients_and_missing_ones() -> None:
    grad = torch.ones(4, 2).to_sparse()
    report = compare_grads({"emb.weight": grad, "b": torch.ones(1)}, {"emb.weight": grad.clone(), "b": None}, 2, None)
    assert [(e.name, e.ok) for e in report] == [("emb.weight.grad", True), ("b.grad", False)]
    assert report[1].note == "gradient missing in compiled"


class EvilClass:
    @property  # type: ignore[misc]
    def __class__(self) -> type:  # noqa: D105 - isinstance() consults it
        raise RuntimeError("class boom")


class ItemsRaise(dict):
    def items(self) -> Any:
        raise RuntimeError("items boom")


class IterRaises(list):
    def __iter__(self) -> Any:
        raise RuntimeError("iter boom")


class BoolRaises:
    def __eq__(self, other: object) -> Any:
        return self

    def __bool__(self) -> bool:
        raise SystemExit(3)  # even this must not escape the comparator

    __hash__ = object.__hash__


@pytest.mark.parametrize(
    "make",
    [EvilClass, lambda: ItemsRaise(a=1), lambda: IterRaises([1]), BoolRaises, lambda: [EqRaises(1)], object],
)
def test_hostile_objects_are_reported_never_raised(make: Any) -> None:
    report = compare_values([make(), torch.ones(1)], [make(), torch.ones(1)], 1, None)
    assert_reportable(report)
    assert all(e.ok for e in report), report  # equal or not compared: never a false mismatch
    assert report[-1].name == "out[1]" and report[-1].compared
    # The gradient side walks the same values.
    x = torch.ones(1, requires_grad=True)
    assert default_loss([make(), x * 2]) is not None


_SPECIAL = [0.0, -0.0, 1.0, -1.0, 1e-45, 3.4e38, -3.4e38, 1e-30, 2.5, math.nan, math.inf, -math.inf]
_DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.complex64, torch.int64, torch.bool]


@st.composite
def _tensor(draw: st.DrawFn, n: int) -> torch.Tensor:
    dtype = draw(st.sampled_from(_DTYPES))
    if dtype == torch.bool:
        return torch.tensor(draw(st.lists(st.booleans(), min_size=n, max_size=n)))
    if dtype == torch.int64:
        return torch.tensor(draw(st.lists(st.integers(-(2**62), 2**62), min_size=n, max_size=n)))
    real = st.one_of(st.sampled_from(_SPECIAL), st.floats(-4, 4))
    values = draw(st.lists(real, min_size=n, max_size=n))
    if dtype.is_complex:
        imag = draw(st.lists(real, min_size=n, max_size=n))
        return torch.tensor([complex(r, i) for r, i in zip(values, imag, strict=True)], dtype=dtype)
    return torch.tensor(values, dtype=torch.float64).to(dtype)


@PROPS
@given(st.integers(1, 6).flatmap(lambda n: st.tuples(_tensor(n), _tensor(n), st.booleans())))
def test_the_measure_without_nan_or_inf_gives_the_general_measures_answer(case: tuple[Any, Any, bool]) -> None:
    """Leaves with no NaN or infinity take a shorter path (tensor_diff._measure_finite, a slice
    at a time; torch.equal for identical ones); its every field equals the masked path's, in
    one slice or several."""
    from playground.worker.run.compare import tensor_diff

    expected, actual, same = case
    if same:
        actual = expected.clone()
    whole = tensor_diff.SLICE
    try:
        for override, tensor_diff.SLICE in ((None, whole), ({"rtol": 0.0, "atol": 0.0}, whole), (None, 2)):
            e_float = expected.dtype.is_floating_point or expected.dtype.is_complex
            floating = e_float or actual.dtype.is_floating_point or actual.dtype.is_complex
            rtol, atol = tolerances.tolerance_for(expected.dtype if e_float else actual.dtype, override)
            entry = Comparison(name="out", call=1, dtype="x", ok=False, rtol=rtol, atol=atol)
            want = tensor_diff._measure_any(entry, expected, actual, rtol, atol, floating)
            assert tensor_diff._measure(entry, expected, actual, override) == want
    finally:
        tensor_diff.SLICE = whole


@pytest.mark.parametrize(
    "dtype",
    [
        getattr(torch, name)
        for name in ("float8_e4m3fn", "float8_e5m2", "float8_e5m2fnuz", "complex32")
        if hasattr(torch, name)
    ],
)
def test_a_dtype_torch_cannot_check_for_finiteness_is_still_measured(dtype: torch.dtype) -> None:
    # isfinite and equal are not implemented for some of these on CPU: the measure takes the
    # general path, never "not compared" (which would pass a value that differs).
    from playground.worker.run.compare import tensor_diff

    expected, actual = torch.tensor([1.0, 2.0]).to(dtype), torch.tensor([1.0, 2.5]).to(dtype)
    entry = tensor_diff.compare_tensors("out", expected, actual, 1, None)
    assert entry.compared and not entry.ok and entry.max_abs == 0.5
    assert tensor_diff.compare_tensors("out", expected, expected.clone(), 1, None).ok
