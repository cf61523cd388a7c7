"""Eager against compiled: each output leaf and gradient compared, and the verdict."""

from __future__ import annotations

from dataclasses import dataclass

from playground.engine.report.wire import Wire, absent_if_empty, absent_if_none, wire


@dataclass(frozen=True)
class Comparison(Wire):
    """One output leaf or one gradient, eager against compiled."""

    name: str = wire("", aliases=("path",))
    call: int = 1
    dtype: str = ""
    max_abs: float | None = None
    max_rel: float | None = None
    atol: float | None = None
    rtol: float | None = None
    ok: bool = False
    #: False for a leaf that could not be compared (a generator, an object whose == raised).
    compared: bool = True
    note: str = ""
    #: In words (VERDICTS): "identical", "within tolerance", "within rounding", "differs", or ""
    #: for a leaf not compared.
    verdict: str = wire("", omit=absent_if_empty("verdict"))
    #: RMS error against the float64 reference of eager and of compiled, when it was consulted.
    eager_err: float | None = wire(None, omit=absent_if_none("eager_err"))
    compiled_err: float | None = wire(None, omit=absent_if_none("compiled_err"))
    #: Where the largest difference is, and the values there, for a leaf that differs.
    worst: str = wire("", omit=absent_if_empty("worst"))


#: The verdicts from best to worst; an Equivalence's verdict is its worst leaf's.
VERDICTS = ("identical", "within tolerance", "within rounding", "differs")


@dataclass(frozen=True)
class Equivalence(Wire):
    ok: bool = False
    outputs: tuple[Comparison, ...] = ()
    grads: tuple[Comparison, ...] = ()
    note: str = ""
    #: The worst leaf's verdict ("" in a report from before verdicts, or when nothing compared).
    verdict: str = wire("", omit=absent_if_empty("verdict"))
    #: Buffers, parameters and module-level tensors that a call changed, eager against compiled,
    #: after that call.
    state: tuple[Comparison, ...] = wire((), omit=absent_if_empty("state"))
    #: How the reference was made: the eager run's process, and the float64 run when consulted.
    reference: str = wire("", omit=absent_if_empty("reference"))
    #: The rule a value outside the tolerance was judged by against float64, in words.
    rule: str = wire("", omit=absent_if_empty("rule"))
