"""The fixes lessons prove what each remedy does, on the installed torch.

Each `snippets/fix_*.py` lists in `FIXES` the remedies `--try-fixes` tries on it: the target (a
break or a recompile, at the line holding `at`), the remedy, and `apply`, the change as a user
would add it to the file. The truth is a plain `python` run of the lesson with `apply` appended
and a driver of the test's own (below) that counts with torch's own means: a counting backend
around the lesson's backend for graphs, torch's graph_breaks and recompiles log artifacts for
breaks and recompiles, eager against compiled for values, gradients and prints. The worker's
`Fix` for that remedy must say the same. A claim with remedy "rewrite" is the advice for a break
no remedy removes: no remedy tried may remove it, the advice must name the rewrite, and the
rewrite itself must compile without a break.

The test process stays torch-free: torch runs in the worker and in the standalone runner.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from playground.engine.passes import Passes
from playground.engine.report import Fix, FixAfter, Report
from playground.engine.settings import Settings
from playground.engine.snippet_settings import literal_settings
from playground.engine.sync import SyncWorker
from tests.requests import request_for
from tests.standalone import StandaloneRunner

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted((ROOT / "snippets").glob("fix_*.py"))

#: Appended after the lesson and its change: torch's own counts and eager against compiled.
DRIVER = r'''
# --- tests/test_gallery_fixes.py's driver ---
import contextlib as _cl
import io as _io
import json as _json
import logging as _logging

import torch as _torch
from torch._dynamo.testing import CompileCounterWithBackend as _Counter
from torch._logging._internal import log_registry as _registry

_seen = {"breaks": 0, "recompiles": 0}


class _Count(_logging.Handler):
    """Each record of an artifact logger (`<module>.__graph_breaks`), which reaches the handler
    of its registered parent: torch's loggers do not propagate past it."""

    def emit(self, record):
        if record.name.endswith("__graph_breaks"):
            _seen["breaks"] += 1
        elif record.name.endswith("__recompiles") and "Recompiling function" in record.getMessage():
            _seen["recompiles"] += 1  # the artifact logs more than the recompile itself


_torch._logging.set_logs(graph_breaks=True, recompiles=True)
for _q in _registry.get_log_qnames():
    _logging.getLogger(_q).handlers = [_Count()]


def _calls():
    return [a if isinstance(a, tuple) else (a,) for a in inputs()]


def _side(target, mark=None):
    out, grads, printed = [], [], _io.StringIO()
    for args in _calls():
        if mark is not None and isinstance(args[mark[0]], _torch.Tensor):
            _torch._dynamo.mark_dynamic(args[mark[0]], mark[1])
        with _cl.redirect_stdout(printed):
            y = target(*args)
        out.append(y.detach())
        if y.requires_grad:
            y.sum().backward()
        grads += [a.grad.clone() for a in args if isinstance(a, _torch.Tensor) and a.grad is not None]
        for a in args:
            if isinstance(a, _torch.Tensor):
                a.grad = None
    return out, grads, printed.getvalue()


_counter = _Counter(SETTINGS["backend"])
_eager = _side(fn)
_compiled = _side(
    _torch.compile(fn, backend=_counter, dynamic=globals().get("DYNAMIC", SETTINGS.get("dynamic"))),
    globals().get("MARK"),
)
_close = len(_eager[1]) == len(_compiled[1]) and all(
    _torch.allclose(a, b, rtol=1e-4, atol=1e-5) for a, b in zip(_eager[0] + _eager[1], _compiled[0] + _compiled[1])
)
if not _eager[2] and not _compiled[2]:
    _prints = ""
elif _eager[2] == _compiled[2]:
    _prints = "same"
else:
    _prints = "dropped" if not _compiled[2] else "changed"
truth = {
    "graph_count": _counter.frame_count,
    "graph_break_count": _seen["breaks"],
    "recompile_count": _seen["recompiles"],
    "close": _close,
    "prints": _prints,
}
print("TRUTH " + _json.dumps(truth))
'''


def _literal(path: Path, name: str) -> Any:
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            return ast.literal_eval(node.value)
    return None


def _line_of(path: Path, text: str) -> int:
    """The first line of the lesson's code (its docstring and FIXES left out) that holds `text`."""
    source = path.read_text(encoding="utf-8")
    code = {
        n
        for node in ast.parse(source).body
        if isinstance(node, ast.FunctionDef)
        for n in range(node.lineno, node.end_lineno + 1)
    }
    found = [n for n, line in enumerate(source.splitlines(), 1) if text in line and n in code]
    assert found, f"{path.name}: no line holds {text!r}"
    return found[0]


def _without_main(path: Path) -> str:
    """The lesson without its `if __name__ == "__main__":` block, whose own compiled calls would
    fill the cache the driver's compile then meets."""
    source = path.read_text(encoding="utf-8")
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and "__name__" in ast.unparse(node.test):
            return "\n".join(source.splitlines()[: node.lineno - 1]) + "\n"
    return source


def _settings(path: Path) -> Settings:
    return Settings.from_dict({**Settings().to_dict(), **literal_settings(path.read_text(encoding="utf-8"))})


def _truth(standalone: StandaloneRunner, path: Path, apply: str, folder: Path) -> dict[str, Any]:
    """torch's counts and verdicts for the lesson with `apply` added, from a plain python run."""
    script = folder / path.name
    script.write_text(_without_main(path) + "\n" + apply + "\n" + DRIVER, encoding="utf-8")
    done = standalone.run(script)
    assert done.returncode == 0, done.stderr[-2000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("TRUTH "))
    return json.loads(line[len("TRUTH ") :])


@pytest.fixture(scope="module")
def tried(worker: SyncWorker) -> dict[Path, Report]:
    """Each lesson's report with its fixes tried (run once, shared by the tests below)."""
    found: dict[Path, Report] = {}
    for path in LESSONS:
        request = request_for(str(path), _settings(path), timing=False, passes=Passes(fixes="all"))
        found[path] = worker.run(request).report
    return found


def test_there_is_a_lesson_for_each_remedy_kind() -> None:
    remedies = {claim["remedy"] for path in LESSONS for claim in _literal(path, "FIXES") or ()}
    assert {"config", "reorderable_logging", "disable", "custom_op", "dynamic", "mark_dynamic", "rewrite"} <= remedies
    assert len(LESSONS) >= 7


@pytest.mark.parametrize("path", LESSONS, ids=[p.stem for p in LESSONS])
def test_each_remedy_does_what_torch_does_with_the_change_added(
    path: Path, tried: dict[Path, Report], standalone: StandaloneRunner, tmp_path: Path
) -> None:
    report = tried[path]
    assert report.error is None, report.error
    claims = _literal(path, "FIXES")
    assert claims, f"{path.name}: no FIXES"
    for claim in claims:
        line = _line_of(path, claim["at"])
        truth = _truth(standalone, path, claim["apply"], tmp_path)
        mine = [f for f in report.fixes if f.target.kind == claim["kind"] and f.target.line == line]
        if claim["remedy"] == "rewrite":
            assert not any(f.removed and not f.moved_to for f in mine), mine
            advice = [a for a in report.fix_advice if a.target.kind == claim["kind"] and a.target.line == line]
            assert advice and claim["rewrite"] in advice[0].rewrite, report.fix_advice
            assert truth["graph_break_count"] == 0 and truth["close"], truth
            continue
        fix = _one(mine, claim["remedy"], path)
        assert fix.error is None, fix.error
        assert fix.after == FixAfter(truth["graph_count"], truth["graph_break_count"], truth["recompile_count"]), (
            claim["remedy"],
            truth,
        )
        assert (fix.equivalence in ("ok", "rounding")) == truth["close"], (fix, truth)
        assert fix.prints == truth["prints"], (fix, truth)


def _one(fixes: list[Fix], remedy: str, path: Path) -> Fix:
    found = [f for f in fixes if f.remedy == remedy]
    assert found, f"{path.name}: --try-fixes did not try {remedy} there: {[f.remedy for f in fixes]}"
    return found[0]


def test_the_fixes_come_best_first(tried: dict[Path, Report]) -> None:
    """A remedy that removes its target with equal values comes before one that does not."""
    for path, report in tried.items():
        keys = [f.achieves() for f in report.fixes]
        assert keys == sorted(keys), path.name
