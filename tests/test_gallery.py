"""The gallery proves its own claims on the installed torch.

Every `snippets/*.py` declares, in a module-level `EXPECTED` dict, what the headless check
reports under its default SETTINGS (graphs, breaks, recompiles, the recompile limit, the
error kind and type, equivalence), and in an optional `VARIANTS` list what the settings keys
its header suggests ("press f", "press d") change. These tests run each through the real
worker and compare, so a torch upgrade that changes a behaviour fails with the snippet's
name and the numbers. A second set runs each file standalone, as `python snippets/NAME.py`.
The real-model section (`snippets/models/`) is checked the same way; its `transformers` files
are skipped, with the reason in pytest's summary, where the `models` extra is not installed.

The test process stays torch-free: snippets are read with `ast`, and torch runs only in the
worker and in the standalone subprocesses.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from playground.engine.report import Report, RunError
from playground.engine.settings import Settings
from playground.engine.snippet_settings import literal_settings
from playground.engine.sync import SyncWorker
from tests.requests import request_for
from tests.standalone import StandaloneRunner

ROOT = Path(__file__).resolve().parents[1]
GALLERY = ROOT / "snippets"
#: The top-level lessons, then the real-model section's.
SNIPPETS = [
    *sorted(p for p in GALLERY.glob("*.py") if not p.name.startswith("_")),
    *sorted(p for p in (GALLERY / "models").glob("*.py") if not p.name.startswith("_")),
]
#: Packages a gallery file may import beyond torch, and how to install each.
OPTIONAL = {"transformers": "pip install compile-playground[models]"}

#: Keys every EXPECTED must give; `error_type` is required when `error` is not None.
REQUIRED = ("graph_count", "graph_break_count", "recompile_count", "recompile_limit_hit", "error", "equivalence_ok")
ALLOWED = {*REQUIRED, "error_type"}
#: The header lines a reader sees, e.g.
#:     Expected (torch 2.13/2.14, default SETTINGS):
#:     graphs 2, breaks 1, recompiles 0, limit hit no, raises no
#: where "raises" is "no" or the error kind and type, as in "raises compile UserError".
HEADER_LINE = re.compile(
    r"^Expected \(torch [^)]*, default SETTINGS\):\s+graphs (?P<graphs>\d+), breaks (?P<breaks>\d+), "
    r"recompiles (?P<recompiles>\d+), limit hit (?P<limit>yes|no), "
    r"raises (?P<raises>no|(?P<kind>compile|snippet|worker) (?P<type>\w+))$",
    re.M,
)
STANDALONE_TIMEOUT_S = 300  # an Inductor snippet on a cold C++ cache takes ~20 s; the rest ~5 s


def _module_literal(path: Path, name: str) -> Any:
    """The literal value of a module-level assignment, without running the snippet."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return ast.literal_eval(node.value)
    return None


def _settings(path: Path, overrides: dict[str, Any] | None = None) -> Settings:
    """What `check` would use: defaults, then the snippet's SETTINGS, then the overrides."""
    snippet_settings = literal_settings(path.read_text(encoding="utf-8"))
    return Settings.from_dict({**Settings().to_dict(), **snippet_settings, **(overrides or {})})


def _name(path: Path) -> str:
    """The test id: `gpt2` under models/ is `models/gpt2`."""
    return path.relative_to(GALLERY).with_suffix("").as_posix()


def _missing(path: Path) -> str | None:
    """Why `path` cannot run here: an optional package it imports that is not installed (looked
    up without importing it: this process stays torch-free)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            top = name.split(".")[0]
            if top in OPTIONAL and importlib.util.find_spec(top) is None:
                return f"{_name(path)} needs {top}, which is not installed here: {OPTIONAL[top]}"
    return None


def _marks(path: Path, settings: Settings) -> tuple[Any, ...]:
    marks: tuple[Any, ...] = (pytest.mark.inductor,) if settings.backend == "inductor" else ()
    missing = _missing(path)
    return (*marks, pytest.mark.skip(reason=missing)) if missing else marks


def _check_cases() -> Iterator[Any]:
    for path in SNIPPETS:
        expected = _module_literal(path, "EXPECTED") or {}
        settings = _settings(path)
        yield pytest.param(path, {}, expected, id=_name(path), marks=_marks(path, settings))
        for variant in _module_literal(path, "VARIANTS") or ():
            overrides = variant["settings"]
            label = ",".join(f"{k}={v}" for k, v in overrides.items())
            yield pytest.param(
                path,
                overrides,
                variant["expected"],
                id=f"{_name(path)}[{label}]",
                marks=_marks(path, _settings(path, overrides)),
            )


def _standalone_cases() -> Iterator[Any]:
    for path in SNIPPETS:
        yield pytest.param(path, id=_name(path), marks=_marks(path, _settings(path)))


def _observed(report: Report) -> dict[str, Any]:
    error = report.error
    return {
        "graph_count": report.graph_count,
        "graph_break_count": report.graph_break_count,
        "recompile_count": report.recompile_count,
        "recompile_limit_hit": report.recompile_limit_hit,
        "error": error.kind if error is not None else None,
        "error_type": error.type if error is not None else None,
        "equivalence_ok": None if report.equivalence is None else report.equivalence.ok,
    }


def test_the_gallery_has_the_bundled_default() -> None:
    assert (ROOT / "snippets" / "default.py") in SNIPPETS


def test_the_models_section_has_both_libraries() -> None:
    """Real models from transformers and from torch.nn, so that a machine without the extra
    still checks some of the section."""
    models = [p for p in SNIPPETS if p.parent.name == "models"]
    needing = [p for p in models if "transformers" in p.read_text(encoding="utf-8")]
    assert len(needing) >= 2 and len(models) - len(needing) >= 2, [p.name for p in models]


@pytest.mark.parametrize("path", SNIPPETS, ids=[_name(p) for p in SNIPPETS])
def test_snippet_declares_what_it_expects(path: Path) -> None:
    expected = _module_literal(path, "EXPECTED")
    assert isinstance(expected, dict), f"{path.name}: no literal module-level EXPECTED dict"
    missing = [k for k in REQUIRED if k not in expected]
    unknown = set(expected) - ALLOWED
    assert not missing and not unknown, f"{path.name}: EXPECTED missing {missing}, unknown {sorted(unknown)}"
    if expected["error"] is not None:
        assert expected.get("error_type"), f"{path.name}: an expected error needs its error_type"
    for variant in _module_literal(path, "VARIANTS") or ():
        assert set(variant) == {"settings", "expected"}, f"{path.name}: a VARIANTS entry is {variant!r}"
        assert set(variant["expected"]) <= ALLOWED, f"{path.name}: unknown keys in {variant!r}"


@pytest.mark.parametrize("path", SNIPPETS, ids=[_name(p) for p in SNIPPETS])
def test_header_says_what_expected_says(path: Path) -> None:
    """The header comment a reader sees and the EXPECTED dict the test checks must agree."""
    text = path.read_text(encoding="utf-8")
    doc = ast.get_docstring(ast.parse(text)) or ""
    title = doc.strip().splitlines()[0] if doc.strip() else ""
    assert title and len(title) <= 46, f"{path.name}: the gallery title must fit one row at 80 columns: {title!r}"
    for section in ("What it shows", "Look at", "Try next"):
        assert section in doc, f"{path.name}: header lacks its {section!r} paragraph"
    match = HEADER_LINE.search(doc)
    assert match, f"{path.name}: no 'Expected (torch ..., default SETTINGS): graphs N, ...' line"
    expected = _module_literal(path, "EXPECTED")
    said = {
        "graph_count": int(match["graphs"]),
        "graph_break_count": int(match["breaks"]),
        "recompile_count": int(match["recompiles"]),
        "recompile_limit_hit": match["limit"] == "yes",
        "error": match["kind"],
        "error_type": match["type"],
    }
    wanted = {k: expected.get(k) for k in said}
    assert said == wanted, f"{path.name}: header line says {said}, EXPECTED says {wanted}"


@pytest.mark.parametrize(("path", "overrides", "expected"), list(_check_cases()))
def test_check_reports_what_the_snippet_claims(
    worker: SyncWorker, path: Path, overrides: dict[str, Any], expected: dict[str, Any]
) -> None:
    settings = _settings(path, overrides)
    report = worker.run(request_for(str(path), settings, timing=False, timeout_s=STANDALONE_TIMEOUT_S)).report
    observed = _observed(report)
    wrong = {k: {"expected": v, "torch reported": observed[k]} for k, v in expected.items() if observed[k] != v}
    error = report.error or RunError(kind="")
    assert not wrong, (
        f"{path.name} under {settings.label()} on torch {report.torch_version}: {wrong}; "
        f"error: {error.kind} {error.type}: {error.message[:300]}; "
        f"breaks: {[(b.reason, b.line, b.count) for b in report.graph_breaks]}"
    )


@pytest.mark.parametrize("path", list(_standalone_cases()))
def test_snippet_runs_standalone(standalone: StandaloneRunner, path: Path) -> None:
    """`python snippets/NAME.py` exits 0; the refusing ones catch and print their error."""
    done = standalone.run(path)
    assert done.returncode == 0, f"python {path.relative_to(ROOT)} exited {done.returncode}:\n{done.stderr[-3000:]}"
    assert done.stdout.strip(), f"python {path.relative_to(ROOT)} printed nothing"


@pytest.mark.inductor
def test_dropout_masks_differ_under_plain_inductor(standalone: StandaloneRunner) -> None:
    """dropout.py's header claim: outside the playground (no fallback_random), Inductor's own
    random numbers give masks different from eager's (`python snippets/dropout.py --inductor`)."""
    done = standalone.run(ROOT / "snippets" / "dropout.py", "--inductor")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "inductor same dropout mask as eager: False" in done.stdout, done.stdout


@pytest.mark.inductor
@pytest.mark.skipif(_missing(GALLERY / "models" / "resnet_bn.py") is not None, reason="needs the models section")
def test_resnet_bn_on_inductor_differs_beyond_rounding_until_its_tolerance_says_otherwise(
    worker: SyncWorker, tmp_path: Path
) -> None:
    """models/resnet_bn.py's "press b" claim: on Inductor a gradient "differs", and by the float64
    rule, not by a hair: compiled's error is many times eager's own (the header says about 80x),
    in gradients only (the outputs stay within tolerance). The TOLERANCE it suggests accepts it;
    the second run reuses the first's compiled graphs from Inductor's caches."""
    path = GALLERY / "models" / "resnet_bn.py"
    inductor = _settings(path, {"backend": "inductor"})
    report = worker.run(request_for(str(path), inductor, timing=False, timeout_s=STANDALONE_TIMEOUT_S)).report
    eq = report.equivalence
    assert report.error is None and eq is not None, report.error
    failing = [c for c in (*eq.outputs, *eq.grads, *eq.state) if not c.ok]
    assert not eq.ok and eq.verdict == "differs", eq
    assert all(c.ok for c in eq.outputs), eq.outputs
    assert "4.conv2.weight.grad" in {c.name for c in failing}, failing
    for c in failing:
        assert c.verdict == "differs" and c.eager_err is not None and c.compiled_err is not None, c
        assert c.compiled_err > 10 * c.eager_err and c.compiled_err < 1e-3, c

    loose = tmp_path / "resnet_bn.py"
    said = '\nTOLERANCE = {"atol": 1e-3, "rtol": 1e-3}\n'
    loose.write_text(
        path.read_text(encoding="utf-8").replace("\nEXPECTED = {", said + "\nEXPECTED = {"), encoding="utf-8"
    )
    again = worker.run(request_for(str(loose), inductor, timing=False, timeout_s=STANDALONE_TIMEOUT_S)).report
    assert again.error is None and again.equivalence is not None and again.equivalence.ok, again.equivalence
