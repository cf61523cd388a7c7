"""What a bisection's steps and its first-diverging-op search share, apart from both: the
snippet loaded as an importable module, its config applied to torch as a run's is, its target,
and the run's rule on one leaf. Imports torch only inside the functions."""

from __future__ import annotations

import os
import sys
from typing import Any

#: The name a snippet is loaded under, registered in sys.modules: Dynamo imports a class's module
#: by its name (an nn.Module the snippet defines), and a name runpy gives is not importable, so
#: every compile of such a model raised and the bisector blamed backend eager.
SNIPPET_MODULE = "compile_playground_bisected"


#: The settings a bisection judges under that override the snippet's own SETTINGS (those the
#: front end was showing: the app's toggles, bisect's --fullgraph/--dynamic/--mode/--target), set
#: once from the bisection process's command line; every step is a fork of that process.
SETTING_KEYS = ("fullgraph", "dynamic", "mode", "target")
OVERRIDES: dict[str, Any] = {}


def snippet_settings(module: dict[str, Any]) -> dict[str, Any]:
    """The snippet's SETTINGS with the bisection's overrides on top."""
    return {**dict(module.get("SETTINGS") or {}), **OVERRIDES}


def target_of(module: dict[str, Any], settings: dict[str, Any]) -> Any:
    """What a run compiles: model, unless SETTINGS say fn (or there is no model); None for neither."""
    return module.get("model") if settings.get("target") != "fn" and "model" in module else module.get("fn")


def _check_decodes(path: str) -> None:
    """A SyntaxError, as `python SNIPPET` gives, when the file is not text in its encoding
    (compile() lets bad bytes in a comment through, and Dynamo then fails reading the source,
    blamed on the compile)."""
    import tokenize

    with open(path, "rb") as file:
        data = file.read()
        file.seek(0)
        encoding, _ = tokenize.detect_encoding(file.readline)
    try:
        data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise SyntaxError(
            f"the file is not {encoding} text: byte {data[exc.start]:#04x} at offset {exc.start}"
        ) from None


def load_snippet(snippet: str) -> dict[str, Any]:
    """The snippet run as a module (not as `__main__`), its folder first on sys.path; its globals."""
    import importlib.machinery
    import importlib.util

    path = os.path.abspath(snippet)
    _check_decodes(path)
    sys.path.insert(0, os.path.dirname(path))
    # Its loader named outright: a name without ".py" (a file called --json) gets no spec from
    # spec_from_file_location, and `python SNIPPET` runs it all the same.
    loader = importlib.machinery.SourceFileLoader(SNIPPET_MODULE, path)
    spec = importlib.util.spec_from_file_location(SNIPPET_MODULE, path, loader=loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[SNIPPET_MODULE] = module
    loader.exec_module(module)
    return vars(module)


def _apply_config(config: dict[str, Any]) -> None:
    """Each key set on torch's config module, checked and coerced as a run's are (an unknown key
    or a wrong type raises SwitchError)."""
    import torch._dynamo.config
    import torch._inductor.config

    from playground.worker import compat
    from playground.worker.run.spine import decomp_table
    from playground.worker.run.spine.switches import checked_config

    for module, name, value in checked_config(config):
        if f"{module}.{name}" == decomp_table.KEY:
            decomp_table.REMOVED = value
            continue
        target = torch._inductor.config if module == "inductor" else torch._dynamo.config
        setattr(target, name, value)
    # After the load: the snippet's own registrations are in the table, the ops to take out
    # can be taken, and a table not torch's own turns Inductor's caches off (decomp_table.py).
    decomp_table.settle()
    # The driver's C++ probes hold only under the C++ config it probed with.
    compat.forget_probes_if_config_changed()


def prepared(snippet: str, config: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any], Any, Any]:
    """The loaded snippet, its SETTINGS, its target (model, else fn; None when it has neither)
    and its tolerance, with its own config and then `config` applied to torch."""
    from playground.worker.run.compare.tolerances import validate_tolerance

    module = load_snippet(snippet)
    settings = snippet_settings(module)
    merged = dict(settings.get("config") or {})
    merged.update(config)
    _apply_config(merged)
    target = target_of(module, settings)
    tolerance, _ = validate_tolerance(module.get("TOLERANCE"))
    return module, settings, target, tolerance


def _leaf_ok(e: Any, c: Any, r: Any, tolerance: dict[str, float] | None) -> bool:
    """The run's rule on one leaf: within the tolerance; else within the accuracy harness's;
    else, with a float64 value, compiled's RMS error vs float64 at most k x eager's own."""
    import math

    import torch

    from playground.worker.run.compare.tolerances import (
        FLOOR,
        HARNESS_TOL,
        K_DEFAULT,
        K_SMALL_OR_HALF,
        SMALL_NUMEL,
        tolerance_for,
    )

    if e is None or c is None:
        return e is c
    if e.shape != c.shape or e.dtype != c.dtype:
        return False
    rtol, atol = tolerance_for(e.dtype, tolerance)
    if torch.allclose(e.double(), c.double(), rtol=rtol, atol=atol, equal_nan=True):
        return True
    if not (e.is_floating_point() or e.is_complex()):
        return False
    tol = max(HARNESS_TOL, atol, rtol)
    if torch.allclose(c, e, atol=tol, rtol=tol, equal_nan=True):
        return True
    if not isinstance(r, torch.Tensor) or r.shape != e.shape:
        return False
    r64, e64, c64 = r.double(), e.double(), c.double()

    def rmse(value: Any) -> float:
        return float(torch.sqrt(torch.mean(torch.abs(r64 - value) ** 2))) if r64.numel() else 0.0

    eager_err, compiled_err = rmse(e64), rmse(c64)
    small = e.dtype in (torch.float16, torch.bfloat16) or e.numel() < SMALL_NUMEL
    k = K_SMALL_OR_HALF if small else K_DEFAULT
    return math.isfinite(compiled_err) and math.isfinite(eager_err) and compiled_err <= k * eager_err + FLOOR
