"""One step's verdict, in this process: the snippet's calls eagerly and compiled (each call's
output tensors, then the gradients of their sum), compared leaf by leaf by the run's rule.

What the verdict is: every call's output leaves (and, when the output has a gradient, the
parameters' and inputs' gradients of its sum) compared by the run's rule: within
`tolerances.tolerance_for` with the snippet's TOLERANCE, else within the accuracy harness's
tolerance, else compiled's RMS error against a float64 run (a float64 copy of the model, float
inputs cast) at most k x eager's own (equivalence.py's constants). Simpler than a run's
equivalence: no separate reference processes, no built-state digests, no module-state diffs.
Unlike a run, Inductor is not given `fallback_random=True` here: the bisection is about
torch.compile as a plain script gets it. Imports torch only inside the functions.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

from playground.worker.run.bisection.bisect_snippet import _leaf_ok, prepared


def _tensors(value: Any) -> list[Any]:
    import torch
    from torch.utils._pytree import tree_leaves

    return [leaf for leaf in tree_leaves(value) if isinstance(leaf, torch.Tensor)]


def _side(module: dict[str, Any], target: Any, compiled: Any, seed: int) -> list[list[Any]]:
    """Each call's output tensors, then its gradients (params and tensor args), detached."""
    import torch

    calls = []
    model = module.get("model")
    params = list(model.parameters()) if isinstance(model, torch.nn.Module) else []
    torch.manual_seed(1)
    for index, args in enumerate(_calls(module)):
        args = args if isinstance(args, tuple) else (args,)
        args = tuple(
            a.detach().clone().requires_grad_(a.requires_grad) if isinstance(a, torch.Tensor) else a for a in args
        )
        for p in params:
            p.grad = None
        torch.manual_seed(seed + index)
        out = compiled(*args)
        leaves = _tensors(out)
        grads: list[Any] = []
        floats = [t for t in leaves if t.requires_grad and t.is_floating_point()]
        if floats:
            sum(t.sum() for t in floats).backward()
            grads = [p.grad for p in params] + [a.grad for a in args if isinstance(a, torch.Tensor)]
        calls.append(
            [t.detach().clone() for t in leaves] + [g.detach().clone() if g is not None else None for g in grads]
        )
    return calls


class InputsFailed(Exception):
    """inputs() raised: on the compiled side too it is the snippet's failure, not the compile's."""


def _calls(module: dict[str, Any]) -> Iterator[Any]:
    """inputs()'s calls, what it raises as InputsFailed (the compiled side's exceptions are
    otherwise the compile's)."""
    try:
        made = iter(module["inputs"]())  # an iterable, as the contract has it: a list too
    except BaseException as exc:  # noqa: BLE001 - the user's own, sys.exit too
        raise InputsFailed(str(exc)) from exc
    while True:
        try:
            args = next(made)
        except StopIteration:
            return
        except BaseException as exc:  # noqa: BLE001 - the user's own, sys.exit too
            raise InputsFailed(str(exc)) from exc
        yield args


def _agree(
    eager: list[list[Any]], compiled: list[list[Any]], ref: list[list[Any]] | None, tolerance: dict[str, float] | None
) -> bool:
    if len(eager) != len(compiled):
        return False
    for i, (e_call, c_call) in enumerate(zip(eager, compiled, strict=True)):
        if len(e_call) != len(c_call):
            return False
        r_call = ref[i] if ref is not None and i < len(ref) and len(ref[i]) == len(e_call) else [None] * len(e_call)
        for e, c, r in zip(e_call, c_call, r_call, strict=True):
            if not _leaf_ok(e, c, r, tolerance):
                return False
    return True


def _fp64_side(module: dict[str, Any], target: Any) -> list[list[Any]] | None:
    """The calls in float64 (a float64 copy of the model, float inputs cast), or None."""
    import copy

    import torch

    try:
        wide = copy.deepcopy(target).double() if isinstance(target, torch.nn.Module) else target
        if isinstance(target, torch.nn.Module) and module.get("model") is target:
            module = dict(module, model=wide)
        inputs = module["inputs"]

        def wide_inputs() -> Any:
            for args in inputs():
                args = args if isinstance(args, tuple) else (args,)
                yield tuple(a.double() if isinstance(a, torch.Tensor) and a.is_floating_point() else a for a in args)

        return _side(dict(module, inputs=wide_inputs), wide, wide, 7)
    except Exception:  # noqa: BLE001 - no float64 value: the leaf is judged without one
        return None


class SnippetFailed(Exception):
    """The snippet itself failed (loading, no target, its eager run): nothing to bisect."""


def verdict(
    snippet: str, config: dict[str, Any], compiled_side: bool = True, on_eager: Any = None, backend: str = "inductor"
) -> bool:
    """In this process: True when eager and compiled (with `backend`; Inductor unless a culprit
    is re-checked) agree.

    Raises SnippetFailed when the snippet fails before anything is compiled: a bisection of
    that would blame the first backend for the user's own exception."""
    import torch

    torch.manual_seed(0)
    try:
        module, settings, target, tolerance = prepared(snippet, config)
        if target is None or not callable(module.get("inputs")):
            raise SnippetFailed("MissingTarget: the file defines no model or fn with inputs() to bisect")
        eager = _side(module, target, target, 7)
    except SnippetFailed:
        raise
    except BaseException as exc:  # noqa: BLE001 - the user's own (sys.exit too), named with its line
        cause = exc.__cause__ if isinstance(exc, InputsFailed) and exc.__cause__ is not None else exc
        raise SnippetFailed(one_line(cause, snippet)) from cause
    if on_eager is not None:
        on_eager()
    if not compiled_side:
        return True
    kwargs = {k: settings[k] for k in ("fullgraph", "dynamic", "mode") if settings.get(k) is not None}
    compiled_fn = torch.compile(target, backend=backend, **kwargs)
    try:
        compiled = _side(module, target, compiled_fn, 7)
    except InputsFailed as exc:
        cause = exc.__cause__ if exc.__cause__ is not None else exc
        raise SnippetFailed(f"inputs() raised on the compiled run: {one_line(cause, snippet)}") from cause
    if _agree(eager, compiled, None, tolerance):
        return True
    return _agree(eager, compiled, _fp64_side(module, target), tolerance)


def one_line(exc: BaseException, snippet: str) -> str:
    """`Type: message (line N)`, N the snippet's deepest frame in the traceback."""
    line = None
    tb = exc.__traceback__
    while tb is not None:
        if os.path.abspath(tb.tb_frame.f_code.co_filename) == os.path.abspath(snippet):
            line = tb.tb_lineno
        tb = tb.tb_next
    text = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}".rstrip(": ")
    return f"{text} (line {line})" if line else text
