"""Libraries imported once (playground/worker/process/preimport.py), on a real worker, with fake installed
packages in a temporary site-packages folder: a library that leaves torch alone is imported once,
in the template, and every later child inherits it; one that changes torch's state at import (the
default dtype, a Dynamo config switch) is left to the runs, so that a later snippet that does not
import it reports what a fresh process reports ("same bytes, same report")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from playground.engine.settings import Settings
from playground.engine.sync import SyncWorker
from playground.worker.process import preimport
from tests.requests import request_for

from .conftest import worker_with_env

ROOT = Path(__file__).resolve().parents[2]
EAGER = Settings(backend="eager")

LIBRARIES = {
    # leaves torch alone: imported once, in the template
    "cp_pure_lib": "def double(x):\n    return x * 2\n",
    # change torch's state at import: a fresh process running a snippet that does not import
    # them never sees the change, so the template must not import them either
    "cp_dtype_lib": "import torch\ntorch.set_default_dtype(torch.float64)\n",
    "cp_config_lib": "import torch._dynamo\ntorch._dynamo.config.capture_scalar_outputs = True\n",
    # prints at import: a fresh process's output shows it, so every run must import it itself
    "cp_chatty_lib": "print('cp_chatty_lib says hello')\n",
    # change what a later snippet meets beyond torch's global state: the environment, torch's
    # print options, a function of torch's patched; and one that does two of these at once
    "cp_env_lib": "import os\nos.environ['CP_LEAKED'] = 'set by cp_env_lib'\n",
    "cp_print_lib": "import torch\ntorch.set_printoptions(precision=1)\n",
    "cp_gelu_lib": "import torch.nn.functional as F\n\ndef gelu(x, approximate='none'):\n    return x\n\nF.gelu = gelu\n",
    "cp_two_lib": (
        "import os\nimport torch\nos.environ['CP_LEAKED'] = 'set by cp_two_lib'\n"
        "torch.Tensor.__repr__ = lambda self: 'a patched tensor'\n"
    ),
    # a worker thread started at import, which the library's calls wait on: a forked child has
    # no thread but the one that forked
    "cp_thread_lib": (
        "import queue, threading\n_jobs, _done = queue.Queue(), queue.Queue()\n\n"
        "def _work():\n    while True:\n        _done.put(_jobs.get() * 2)\n\n"
        "threading.Thread(target=_work, daemon=True).start()\n\n"
        "def ask(x):\n    _jobs.put(x)\n    return _done.get(timeout=2)\n"
    ),
}
LOGGED = "import os\nwith open(os.environ['CP_IMPORT_LOG'], 'a') as fh:\n    fh.write(f'{{os.getpid()}} {name}\\n')\n"

USES = """
import torch
{imports}

print("default dtype", torch.get_default_dtype())


def fn(x):
    y = x * 2
    if y.sum().item() > 0:  # a break, unless dynamo.capture_scalar_outputs is on
        y = y + 1
    return y


def inputs():
    yield torch.ones(3)
"""


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An installed-looking folder (its path holds `site-packages`) with the fake libraries."""
    folder = tmp_path_factory.mktemp("preimport") / "lib" / "site-packages"
    for name, body in LIBRARIES.items():
        package = folder / name
        package.mkdir(parents=True)
        (package / "__init__.py").write_text(LOGGED.format(name=name) + body, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def log(site: Path) -> Path:
    return site.parent / "imports.log"


def _env(site: Path, log: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), str(site), env.get("PYTHONPATH", "")]))
    env["CP_IMPORT_LOG"] = str(log)
    return env


@pytest.fixture(scope="module")
def worker(site: Path, log: Path) -> Iterator[SyncWorker]:
    """A warm worker that sees the fake site-packages (the client passes its environment on)."""
    w = worker_with_env(_env(site, log))
    yield w
    w.close()


def _snippet(folder: Path, name: str, imports: str) -> Path:
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(USES.format(imports=imports)).lstrip(), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def other_fresh(site: Path, log: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A fresh `check` of the snippet that imports none of the libraries: the same bytes and
    environment in each case that compares with it, so one fresh process answers for all."""
    return _fresh(_snippet(tmp_path_factory.mktemp("other"), "other", ""), site, log)


def _summary(report: dict[str, Any]) -> dict[str, Any]:
    """What the lesson and the isolation are about: the counts, the verdict, what it printed."""
    return {
        "graph_count": report["graph_count"],
        "graph_break_count": report["graph_break_count"],
        "error": report["error"],
        "equivalence_ok": report["equivalence"]["ok"] if report["equivalence"] else None,
        "output": report["output"]["text"].strip(),
    }


def _warm(worker: SyncWorker, path: Path) -> dict[str, Any]:
    return _summary(worker.run(request_for(str(path), EAGER, timing=False)).report.to_dict())


def _fresh(path: Path, site: Path, log: Path) -> dict[str, Any]:
    """`check --json` in a fresh process: the reference the warm worker must equal."""
    done = subprocess.run(
        [sys.executable, "-m", "playground", "check", "--json", "--no-timing", "--backend", "eager", str(path)],
        cwd=ROOT,
        env=_env(site, log),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return _summary(json.loads(done.stdout))


def _importers(log: Path, name: str) -> list[int]:
    lines = log.read_text().split("\n") if log.exists() else []
    return [int(line.split()[0]) for line in lines if line.endswith(f" {name}")]


def test_the_snippets_imports_are_read_without_running_it(tmp_path: Path, site: Path):
    source = "import torch\nimport os.path\nfrom cp_pure_lib import double\nfrom . import helper\n"
    assert preimport.imported_names(source) == [("torch", ()), ("os.path", ()), ("cp_pure_lib", ("double",))]
    (tmp_path / "cp_dtype_lib.py").write_text("")  # the snippet's folder shadows this one
    sys.path.insert(0, str(site))
    try:
        assert preimport.installed("cp_pure_lib", str(tmp_path))
        assert not preimport.installed("cp_dtype_lib", str(tmp_path))
        assert not preimport.installed("os", str(tmp_path))  # the standard library: cheap, and not a package
    finally:
        sys.path.remove(str(site))


def test_a_library_that_leaves_torch_alone_is_imported_once_in_the_template(worker, site, log, tmp_path):
    path = _snippet(tmp_path, "pure", "import cp_pure_lib")
    reports = [_warm(worker, path) for _ in range(3)]
    importers = _importers(log, "cp_pure_lib")
    # the first run's child and its eager reference (which loads the snippet in a process of its
    # own), then the template (whose children the next runs are): never again
    assert len(importers) == 3 and importers[2] == worker.template_pid, importers
    assert reports[0] == reports[1] == reports[2] == _fresh(path, site, log)


def test_a_file_beside_the_snippet_wins_over_a_package_the_template_imported(worker, site, log, tmp_path):
    """An earlier snippet elsewhere made the template import the installed cp_pure_lib; this one
    has its own cp_pure_lib.py beside it, which `python snippet.py` would import."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    first = _snippet(elsewhere, "pure", "import cp_pure_lib")
    # The template imports it after the run's report is sent, before it takes the next request:
    # a second run is the first moment the import has surely happened.
    _warm(worker, first)
    _warm(worker, first)
    assert worker.template_pid in _importers(log, "cp_pure_lib")
    here = tmp_path / "here"
    here.mkdir()
    (here / "cp_pure_lib.py").write_text("print('the local cp_pure_lib')\n", encoding="utf-8")
    path = _snippet(here, "shadowed", "import cp_pure_lib")
    report = _warm(worker, path)
    assert report["output"].startswith("the local cp_pure_lib"), report
    assert report == _fresh(path, site, log)


@pytest.mark.parametrize(
    ("library", "printed", "breaks_without"),
    [
        ("cp_dtype_lib", "default dtype torch.float64", 1),
        ("cp_config_lib", "default dtype torch.float32", 1),
        ("cp_chatty_lib", "cp_chatty_lib says hello\ndefault dtype torch.float32", 1),
    ],
)
def test_a_library_that_changes_torch_at_import_is_left_to_the_runs(
    worker, site, log, tmp_path, other_fresh, library, printed, breaks_without
):
    user = _snippet(tmp_path, "user", f"import {library}")
    other = _snippet(tmp_path, "other", "")
    before = len(_importers(log, library))
    first, second = _warm(worker, user), _warm(worker, user)
    assert first == second == _fresh(user, site, log)
    assert first["output"] == printed
    # the template tried it once after the first run, saw the change and started over without
    # it: every later run imports it itself, as a fresh process does
    seen = _importers(log, library)[before:]
    assert seen.count(worker.template_pid) == 1, seen  # the pid survives the template's re-exec
    # each run's child and its eager reference, and the fresh check's, import it themselves
    others = [pid for pid in seen if pid != worker.template_pid]
    assert len(set(others)) == len(others) >= 5, seen
    # a later snippet that does not import it sees torch as a fresh process does
    later = _warm(worker, other)
    assert later == other_fresh
    assert later["output"] == "default dtype torch.float32"
    assert later["graph_break_count"] == breaks_without


#: What a later snippet meets of the libraries above, printed: the environment, a tensor's
#: printed form (print options, a patched Tensor.__repr__), and whether F.gelu is torch's.
PROBE = """
import os
import torch
import torch.nn.functional as F
{imports}

print("env", os.environ.get("CP_LEAKED"), "gelu", F.gelu.__module__, torch.tensor([1.23456]))


def fn(x):
    return F.gelu(x)


def inputs():
    yield torch.ones(3)
"""


def _probe(folder: Path, name: str, imports: str) -> Path:
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(PROBE.format(imports=imports)).lstrip(), encoding="utf-8")
    return path


@pytest.mark.parametrize("library", ["cp_env_lib", "cp_print_lib", "cp_gelu_lib", "cp_two_lib"])
def test_a_library_that_changes_what_a_later_snippet_meets_is_left_to_the_runs(worker, site, log, tmp_path, library):
    user = _probe(tmp_path, "user", f"import {library}")
    other = _probe(tmp_path, "other", "")
    fresh_other = _fresh(other, site, log)
    # torch's own behaviour in a fresh process: the snippet that does not import it sees
    # torch's gelu, no variable, torch's print options
    assert fresh_other["output"] == "env None gelu torch._C._nn tensor([1.2346])", fresh_other
    before = len(_importers(log, library))
    first, second = _warm(worker, user), _warm(worker, user)
    assert first == second == _fresh(user, site, log)
    assert first["output"] != fresh_other["output"]  # the library does change what a run meets
    assert _importers(log, library)[before:].count(worker.template_pid) == 1
    assert _warm(worker, other) == fresh_other


def test_a_library_whose_thread_a_fork_loses_gives_the_same_report_every_time(worker, site, log, tmp_path):
    path = tmp_path / "asks.py"
    path.write_text(
        "import torch\nimport cp_thread_lib\n\n\ndef fn(x):\n    return x * 2\n\n\n"
        "def inputs():\n    yield torch.ones(3) * cp_thread_lib.ask(2)\n",
        encoding="utf-8",
    )
    reports = [_warm(worker, path) for _ in range(3)]
    assert reports[0]["error"] is None, reports[0]
    assert reports[0] == reports[1] == reports[2] == _fresh(path, site, log)


def test_a_forked_child_has_only_the_thread_that_forked():
    """Python's own behaviour, which the thread check rests on."""
    program = (
        "import os, threading, time\n"
        "threading.Thread(target=time.sleep, args=(5,), daemon=True).start()\n"
        "pid = os.fork()\n"
        "if pid == 0:\n    os._exit(threading.active_count())\n"
        "print(threading.active_count(), os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))\n"
    )
    done = subprocess.run([sys.executable, "-W", "ignore", "-c", program], capture_output=True, text=True, timeout=30)
    assert done.stdout.split() == ["2", "1"], done
