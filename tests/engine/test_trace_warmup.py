"""What a run's trace met, warmed in the template for the next run (playground/worker/process/
trace_warmup.py): on a real worker with a fake installed package, the next run's child finds the
package's file already tokenized in Dynamo's funcname_cache and the module the previous run
imported lazily already imported; a file the template tokenized that changes is tokenized again
by the run; and never the snippet's own folder: a helper beside the snippet, edited between two
saves so that its lines move, gives the report a fresh process gives ("same bytes, same report")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from playground.engine.settings import Settings
from playground.engine.sync import SyncWorker
from playground.worker.process import preimport, trace_warmup
from tests.requests import request_for

from .conftest import worker_with_env

ROOT = Path(__file__).resolve().parents[2]
EAGER = Settings(backend="eager")

#: A fake installed package: fn calls `scale` (Dynamo traces it: its file goes into
#: funcname_cache), and inputs() calls `make`, which imports a submodule lazily, as a trace does.
LIBRARY = """
import os
with open(os.environ["CP_IMPORT_LOG"], "a") as fh:
    fh.write(f"{os.getpid()} cp_traced_lib\\n")


def scale(x):
    return x * 2


def make():
    from cp_traced_lib import lazy

    return lazy.ones()


def make_other():
    from cp_traced_lib import lazy_other

    return lazy_other.ones()
"""
LAZY = """
import os
with open(os.environ["CP_IMPORT_LOG"], "a") as fh:
    fh.write(f"{os.getpid()} cp_traced_lib.lazy\\n")


def ones():
    import torch

    return torch.ones(3)
"""

#: What the run's child holds when it loads the snippet (before its trace): printed.
USES = """
import sys
import torch
import torch._dynamo.funcname_cache
import cp_traced_lib

cache = torch._dynamo.funcname_cache.cache
file = cp_traced_lib.__file__
held = cache.pop(file, None)
torch._dynamo.funcname_cache.get_funcname(file, 1)  # what a fresh process computes now
current = held is None or held == cache[file]
if held is None:
    del cache[file]
else:
    cache[file] = held
print("tokenized", held is not None, "current", current, "lazy", "cp_traced_lib.lazy" in sys.modules)


def fn(x):
    y = cp_traced_lib.scale(x)
    print("a break")
    return y + 1


def inputs():
    yield cp_traced_lib.make()
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An installed-looking folder (its path holds `site-packages`) with the fake package."""
    folder = tmp_path_factory.mktemp("trace_warmup") / "lib" / "site-packages"
    package = folder / "cp_traced_lib"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(LIBRARY, encoding="utf-8")
    (package / "lazy.py").write_text(LAZY, encoding="utf-8")
    (package / "lazy_other.py").write_text(
        LAZY.replace("cp_traced_lib.lazy", "cp_traced_lib.lazy_other"), encoding="utf-8"
    )
    return folder


@pytest.fixture(scope="module")
def log(site: Path) -> Path:
    return site.parent / "imports.log"


def _env(site: Path, log: Path, warmed: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), str(site), env.get("PYTHONPATH", "")]))
    env["CP_IMPORT_LOG"] = str(log)
    if warmed is not None:
        env[trace_warmup.LOG_ENV] = str(warmed)
    return env


@pytest.fixture(scope="module")
def warmed_log(site: Path) -> Path:
    """The template's own line per warm-up (trace_warmup.LOG_ENV)."""
    return site.parent / "warmed.log"


@pytest.fixture(scope="module")
def worker(site: Path, log: Path, warmed_log: Path) -> Iterator[SyncWorker]:
    """A warm worker that sees the fake site-packages (the client passes its environment on)."""
    w = worker_with_env(_env(site, log, warmed_log))
    yield w
    w.close()


def _report(worker: SyncWorker, path: Path) -> dict[str, Any]:
    return worker.run(request_for(str(path), EAGER, timing=False)).report.to_dict()


def _essence(report: dict[str, Any]) -> dict[str, Any]:
    """What torch decided, where: the counts, each break's file, line and torch's words."""
    return {
        "graph_count": report["graph_count"],
        "graph_break_count": report["graph_break_count"],
        "breaks": [(b["file"], b["line"], b["reason"], b["detail"]) for b in report["graph_breaks"]],
        "error": report["error"],
        "equivalence_ok": report["equivalence"]["ok"] if report["equivalence"] else None,
        "local_modules": report["local_modules"],
    }


def _fresh(path: Path, env: dict[str, str]) -> dict[str, Any]:
    """`check --json` in a fresh process: the truth for a warm run of the same bytes."""
    done = subprocess.run(
        [sys.executable, "-m", "playground", "check", "--json", "--no-timing", "--backend", "eager", str(path)],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.stdout, done.stderr[-2000:]
    return json.loads(done.stdout)


def _printed(report: dict[str, Any]) -> str:
    return report["output"]["text"].strip().split("\n")[0]


def _importers(log: Path, name: str) -> list[int]:
    lines = log.read_text().split("\n") if log.exists() else []
    return [int(line.split()[0]) for line in lines if line.endswith(f" {name}")]


def test_the_next_runs_child_finds_what_the_last_trace_met_already_warm(worker, site, log, warmed_log, tmp_path):
    path = tmp_path / "uses.py"
    path.write_text(textwrap.dedent(USES).lstrip(), encoding="utf-8")
    first = _report(worker, path)
    # The template warms after the run's report is sent, before it takes the next request.
    second = _report(worker, path)
    assert first["error"] is None, first["error"]
    assert _printed(first) == "tokenized False current True lazy False", first["output"]
    assert _printed(second) == "tokenized True current True lazy True", second["output"]
    # imported lazily by the first run's child, then by the template: never by a later run
    assert worker.template_pid in _importers(log, "cp_traced_lib.lazy")
    warmed = [json.loads(line) for line in warmed_log.read_text().splitlines()]
    assert any("cp_traced_lib.lazy" in w["modules"] for w in warmed), warmed
    tokenized = [f for w in warmed for f in w["files"]]
    assert any(f.endswith(os.path.join("cp_traced_lib", "__init__.py")) for f in tokenized), tokenized
    assert any(f.endswith(os.path.join("torch", "nn", "modules", "module.py")) for f in tokenized) or tokenized
    # never the snippet itself
    assert not any(f.startswith(str(tmp_path)) for f in tokenized), tokenized
    # what torch decided is a fresh process's (only the printed probe of the cache differs)
    assert _essence(first) == _essence(second) == _essence(_fresh(path, _env(site, log)))


def test_a_tokenized_file_that_changes_is_read_as_it_is_now(worker, site, log, tmp_path):
    """funcname_cache never checks a file's time: the template's entry for a file edited since
    is dropped (by the run's child, or by the template before it warms again), never used."""
    path = tmp_path / "uses.py"
    path.write_text(textwrap.dedent(USES).lstrip(), encoding="utf-8")
    _report(worker, path)
    assert _printed(_report(worker, path)) == "tokenized True current True lazy True"
    library = site / "cp_traced_lib" / "__init__.py"
    original = library.read_text(encoding="utf-8")
    try:
        # Lines added above `scale`: the old entry would name the new lines wrongly.
        library.write_text("# moved\n" * 7 + original, encoding="utf-8")
        for _ in range(3):
            report = _report(worker, path)
            assert "current True" in _printed(report), report["output"]
        # the template tokenized the new version for the runs after it
        assert _printed(report) == "tokenized True current True lazy True"
    finally:
        library.write_text(original, encoding="utf-8")


CONFIGURED = """
import sys
import torch
import cp_traced_lib

torch._dynamo.config.capture_scalar_outputs = True  # what a module imported now may read
print("lazy", "cp_traced_lib.lazy_other" in sys.modules)


def fn(x):
    return cp_traced_lib.scale(x)


def inputs():
    yield cp_traced_lib.make_other()
"""


def test_modules_a_run_imported_under_its_own_config_are_left_to_the_runs(worker, site, log, tmp_path):
    """A module may read torch's config when it is imported: one imported while the snippet's
    config was in force holds what the template's import would not, so it is never imported
    ahead (and every run imports it, as a fresh process does)."""
    path = tmp_path / "configured.py"
    path.write_text(textwrap.dedent(CONFIGURED).lstrip(), encoding="utf-8")
    reports = [_report(worker, path) for _ in range(3)]
    assert reports[0]["error"] is None, reports[0]["error"]
    assert [_printed(r) for r in reports] == ["lazy False"] * 3
    assert worker.template_pid not in _importers(log, "cp_traced_lib.lazy_other")
    fresh = _fresh(path, _env(site, log))
    assert all(_essence(r) == _essence(fresh) for r in reports)


HELPER_USER = """
import torch
import torch._dynamo.funcname_cache
import helper_lines

print("helper tokenized", any(f.endswith("helper_lines.py") for f in torch._dynamo.funcname_cache.cache))


def fn(x):
    return helper_lines.step(x) + 1


def inputs():
    yield torch.ones(3)
"""

HELPER = """{padding}
def step(x):
    y = x * 2
    print("a break in the helper")
    return y - 1
"""


def test_an_edited_helper_beside_the_snippet_reports_as_a_fresh_process(worker, site, log, tmp_path):
    """The helper's file is the user's: never tokenized or imported by the template, so its lines
    after an edit are the new file's, as in a fresh process."""
    path = tmp_path / "user.py"
    path.write_text(textwrap.dedent(HELPER_USER).lstrip(), encoding="utf-8")
    helper = tmp_path / "helper_lines.py"
    for padding in ("", "\n\n\n# moved down\n\n\n"):
        helper.write_text(HELPER.format(padding=padding), encoding="utf-8")
        warm = [_report(worker, path) for _ in range(2)]
        fresh = _fresh(path, _env(site, log))
        for report in warm:
            assert _essence(report) == _essence(fresh)
            assert report["output"]["text"] == fresh["output"]["text"]
            assert _printed(report) == "helper tokenized False"
        assert any(b["file"].endswith("helper_lines.py") for b in fresh["graph_breaks"]), fresh["graph_breaks"]


def test_what_a_run_met_is_kept_only_when_it_is_torchs_or_installed(tmp_path, site):
    """The template's reading of a run's file (which the snippet could have written itself)."""
    import torch

    torch_file = os.path.join(os.path.dirname(torch.__file__), "nn", "modules", "module.py")
    snippet_dir = tmp_path / "project"
    venv_file = snippet_dir / ".venv" / "lib" / "site-packages" / "pkg" / "mod.py"
    helper = snippet_dir / "helper.py"
    for file in (venv_file, helper):
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text("def f():\n    pass\n", encoding="utf-8")
    cache = sys.modules["torch._dynamo.funcname_cache"].cache
    cache.pop(torch_file, None)
    met = {
        "modules": {
            "cp_traced_lib.lazy": str(site / "cp_traced_lib" / "lazy.py"),
            "helper": str(helper),  # the snippet's helper
            "torch._inductor.runtime.compile_tasks.cabc": "/tmp/torchinductor_x/ab/cabc.py",  # generated
            "no such name!": str(site / "cp_traced_lib" / "lazy.py"),
        },
        "files": [torch_file, str(venv_file), str(helper), "relative.py", str(snippet_dir / "user.py")],
    }
    path = trace_warmup.met_path(os.getpid(), "a run")
    Path(path).write_text(json.dumps(met), encoding="utf-8")
    sys.path.insert(0, str(site))
    try:
        found = trace_warmup.read("a run", str(snippet_dir / "user.py"), set(), preimport.installed)
        skipped = trace_warmup.read("a run", str(snippet_dir / "user.py"), {"cp_traced_lib"}, preimport.installed)
    finally:
        sys.path.remove(str(site))
    assert not os.path.exists(path)  # read once, then gone
    assert found.modules == ("cp_traced_lib.lazy",)
    # a project's own virtual environment below the snippet's folder is installed packages
    assert found.files == (torch_file, str(venv_file))
    assert skipped == trace_warmup.Met()  # its file was already read and removed


def test_the_child_forgets_a_tokenized_file_that_changed(tmp_path):
    import torch._dynamo.funcname_cache as funcname_cache

    file = tmp_path / "lib.py"
    file.write_text("def f():\n    return 1\n", encoding="utf-8")
    trace_warmup.tokenize((str(file),))
    try:
        assert funcname_cache.cache[str(file)][2] == "f"
        trace_warmup.drop_stale()
        assert str(file) in funcname_cache.cache  # unchanged: kept
        file.write_text("\n\ndef g():\n    return 1\n", encoding="utf-8")
        os.utime(file, ns=(time.time_ns(), time.time_ns() + 10**9))
        trace_warmup.drop_stale()
        assert str(file) not in funcname_cache.cache
        assert str(file) not in trace_warmup.TOKENIZED
        assert funcname_cache.get_funcname(str(file), 4) == "g"
    finally:
        funcname_cache.cache.pop(str(file), None)
        trace_warmup.TOKENIZED.pop(str(file), None)
