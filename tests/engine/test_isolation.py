"""Same bytes, same report: a warm worker's report equals a fresh process's `check`.

Each test is a sequence of saves to one file in one warm session: an earlier version changes
some process state (torch config, global torch state, modules, cwd, environment, …), a later
version does not, and the later report must equal what `check` reports for the same content in
a fresh process. The expectation is never written by hand: it is the fresh process's report.
"""

from __future__ import annotations

import gc
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from playground.engine.settings import Settings
from playground.engine.sync import SyncWorker
from tests.processes import any_running
from tests.requests import request_for

ROOT = Path(__file__).resolve().parents[2]
EAGER = Settings(backend="eager")

#: The later version: a .item() break (capture_scalar_outputs removes it), a shape change
#: (recompile_limit and dynamic matter), gradients, and a print of every piece of state that
#: an earlier version may have changed, so that any leak shows in the output too.
PROBE = """
import logging, os, random, signal, sys, threading, warnings
import torch

def fn(x):
    y = torch.sin(x) * 2
    n = y.sum().item()
    return y * n

def inputs():
    torch.manual_seed(0)
    return [torch.randn(3, requires_grad=True), torch.randn(4, requires_grad=True), torch.randn(5, requires_grad=True)]

def _state():
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config
    import torch.fx.experimental._config as fx_config
    yield "capture_scalar_outputs", torch._dynamo.config.capture_scalar_outputs
    yield "recompile_limit", torch._dynamo.config.recompile_limit
    yield "inductor.max_autotune", inductor_config.max_autotune
    yield "functorch.donated_buffer", functorch_config.donated_buffer
    yield "fx.no_data_dependent_graph_break", fx_config.no_data_dependent_graph_break
    yield "default_dtype", torch.get_default_dtype()
    yield "default_device", torch.empty(0).device
    yield "grad", torch.is_grad_enabled()
    yield "inference", torch.is_inference_mode_enabled()
    yield "autocast_cpu", torch.is_autocast_enabled("cpu")
    yield "anomaly", torch.is_anomaly_enabled()
    yield "deterministic", torch.are_deterministic_algorithms_enabled()
    yield "num_threads", torch.get_num_threads()
    yield "matmul_precision", torch.get_float32_matmul_precision()
    yield "mkldnn", torch.backends.mkldnn.enabled
    yield "torch_rng", torch.randn(2).tolist()
    yield "python_rng", random.random()
    yield "leaked_module", "leaky_helper_module" in sys.modules
    yield "sys_path_junk", "/leaked/path" in sys.path
    yield "cwd", os.getcwd()
    yield "env", os.environ.get("LEAKED_VAR")
    yield "warnings", len(warnings.filters)
    yield "root_logger", (logging.getLogger().level, len(logging.getLogger().handlers))
    yield "sigusr1", str(signal.getsignal(signal.SIGUSR1))
    yield "threads", threading.active_count()
    yield "dynamo_log_level", logging.getLogger("torch._dynamo").level
    yield "interop_threads", torch.get_num_interop_threads()

for key, value in _state():
    print(f"{key} = {value!r}")
"""

#: Earlier versions: each changes one kind of state at import time and runs normally.
SETUPS: dict[str, str] = {
    "dynamo_config": "torch._dynamo.config.capture_scalar_outputs = True",
    "recompile_limit": "torch._dynamo.config.recompile_limit = 1",
    "inductor_config": "import torch._inductor.config as c; c.max_autotune = True",
    "functorch_config": "import torch._functorch.config as c; c.donated_buffer = not c.donated_buffer",
    "fx_config": "import torch.fx.experimental._config as c; c.no_data_dependent_graph_break = True",
    "stance": "torch.compiler.set_stance('force_eager')",
    "set_logs": "import logging as _l; torch._logging.set_logs(dynamo=_l.DEBUG)",
    "default_dtype": "torch.set_default_dtype(torch.float64)",
    "default_device": "torch.set_default_device('meta')",
    "grad_mode": "torch.set_grad_enabled(False)",
    "inference_mode": "_mode = torch.inference_mode(); _mode.__enter__()",
    "autocast": "torch.set_autocast_enabled('cpu', True)",
    "anomaly": "torch.autograd.set_detect_anomaly(True)",
    "deterministic": "torch.use_deterministic_algorithms(True)",
    "num_threads": "torch.set_num_threads(1)",
    "interop_threads": "torch.set_num_interop_threads(1)",
    "backends_flags": "torch.backends.mkldnn.enabled = False",
    "matmul_precision": "torch.set_float32_matmul_precision('medium')",
    "rng": "torch.manual_seed(1234); torch.randn(100); random.seed(99)",
    "modules_and_sys_path": "sys.modules['leaky_helper_module'] = sys; sys.path.append('/leaked/path')",
    "cwd": "os.chdir('/')",
    "environ": "os.environ['LEAKED_VAR'] = 'yes'",
    "warnings": "warnings.simplefilter('error')",
    "logging": "logging.getLogger().setLevel(logging.CRITICAL); logging.getLogger().addHandler(logging.NullHandler())",
    "signal_handlers": "signal.signal(signal.SIGUSR1, lambda *a: None)",
    "threads": "threading.Thread(target=lambda: __import__('time').sleep(3600), daemon=True).start()",
    "child_process": "import subprocess; subprocess.Popen(['sleep', '3339'])",
    "child_new_session": "import subprocess; subprocess.Popen(['sleep', '3338'], start_new_session=True)",
}


def _setup_version(setup: str) -> str:
    """The probe with the state change made at import time, before everything else."""
    head = "import logging, os, random, signal, sys, threading, warnings\nimport torch\n"
    return head + setup + "\n" + PROBE


_IDS = re.compile(r"\b\d{7,}\b")


def _norm(text: str) -> str:
    """Object ids in guards differ between processes; nothing else may."""
    return _IDS.sub("<id>", text)


def essence(report: dict[str, Any]) -> dict[str, Any]:
    """What "the same report" means: everything torch decided and the snippet did; not timings,
    pids or wall clock."""
    eq = report.get("equivalence") or {}
    error = report.get("error")
    return {
        "settings": report["settings"],
        "graph_count": report["graph_count"],
        "graph_break_count": report["graph_break_count"],
        "graph_breaks": [(b["reason"], b["line"], b["count"]) for b in report["graph_breaks"]],
        "recompiles": [(r["function"], [_norm(x) for x in r["reasons"]]) for r in report["recompiles"]],
        "recompile_limit_hit": report["recompile_limit_hit"],
        "guards": [(g["compile_id"], [_norm(x) for x in g["guards"]]) for g in report["guards"]],
        "error": None if error is None else (error["kind"], error["type"], error["line"]),
        "raised": error is not None,
        "outputs": [(o["name"], o.get("dtype"), o["max_abs"], o["ok"]) for o in eq.get("outputs", [])],
        "grads": [(g["name"], g.get("dtype"), g["ok"]) for g in eq.get("grads", [])],
        "equivalent": eq.get("ok"),
        "printed": report["output"]["text"],
        "local_modules": report.get("local_modules"),
    }


def fresh_check(path: Path, *flags: str) -> dict[str, Any]:
    """`check` in a fresh process: the truth for a warm run of the same bytes."""
    done = subprocess.run(
        [sys.executable, "-m", "playground", "check", str(path), "--json", "--no-timing", "--backend", "eager", *flags],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert done.stdout, done.stderr[-3000:]
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def probe_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("isolation")


@pytest.fixture(scope="module")
def fresh_probe(probe_dir: Path) -> dict[str, Any]:
    path = probe_dir / "snip.py"
    path.write_text(PROBE, encoding="utf-8")
    return essence(fresh_check(path))


def _warm_run(warm: SyncWorker, path: str) -> dict[str, Any]:
    """A warm run's report as JSON: compared with a fresh `check --json` of the same bytes."""
    return warm.run(request_for(path, EAGER, timing=False)).report.to_dict()


@pytest.fixture(scope="module")
def warm() -> Any:
    with SyncWorker(timeout_s=120) as w:
        w.start()
        yield w


def test_the_probe_itself_shows_the_default_state(fresh_probe: dict[str, Any]) -> None:
    # Guard against a probe that cannot fail: the fresh report has the break that
    # capture_scalar_outputs would remove, gradients, and the default state printed.
    assert fresh_probe["graph_break_count"] >= 1
    assert fresh_probe["grads"], fresh_probe
    assert "capture_scalar_outputs = False" in fresh_probe["printed"]
    assert "default_dtype = torch.float32" in fresh_probe["printed"]
    assert "cwd = " + repr(str(ROOT)) in fresh_probe["printed"]


@pytest.mark.parametrize("name", list(SETUPS))
def test_a_state_change_never_reaches_the_next_save(
    name: str, warm: SyncWorker, probe_dir: Path, fresh_probe: dict[str, Any]
) -> None:
    path = probe_dir / "snip.py"
    path.write_text(_setup_version(SETUPS[name]), encoding="utf-8")
    changed = _warm_run(warm, str(path))
    assert changed["error"] is None or changed["error"]["kind"] != "worker", changed["error"]
    # The state change did take effect in that run: it is what the earlier save printed.
    assert essence(changed)["printed"] != fresh_probe["printed"] or name in _NOT_PRINTED, name
    path.write_text(PROBE, encoding="utf-8")
    later = _warm_run(warm, str(path))
    assert essence(later) == fresh_probe


#: Changes the probe cannot print from inside the run that made them (they only show later, or
#: only in torch's decisions): their later run is still compared in full.
_NOT_PRINTED = {"stance", "child_process", "child_new_session"}


def test_processes_a_run_started_do_not_outlive_it(warm: SyncWorker, probe_dir: Path) -> None:
    path = probe_dir / "procs.py"
    path.write_text(
        _setup_version(
            "import subprocess\n"
            "subprocess.Popen(['sleep', '3337'])\n"
            "subprocess.Popen(['sleep', '3336'], start_new_session=True)\n"
            "subprocess.Popen(['sh', '-c', 'sleep 3335 & wait'], start_new_session=True)\n"
        ),
        encoding="utf-8",
    )
    _warm_run(warm, str(path))
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(any_running(f"sleep 333{n}") for n in (5, 6, 7)):
        time.sleep(0.1)
    assert not any(any_running(f"sleep 333{n}") for n in (5, 6, 7))


GC_PROBE = """
import gc
import torch

def fn(x):
    return x * 2

def inputs():
    return [torch.ones(2)]

print("gc", gc.isenabled(), gc.get_threshold())
"""


def test_a_run_has_the_collector_a_plain_program_has(worker: SyncWorker, tmp_path: Path) -> None:
    """The worker pauses the garbage collector while it imports torch (playground/worker/
    __main__.py) and must turn it on again: a run with it off would grow where a plain program
    does not, and time differently."""
    path = tmp_path / "gc_probe.py"
    path.write_text(GC_PROBE, encoding="utf-8")
    report = worker.run(request_for(str(path), EAGER, timing=False)).report
    assert report.error is None, report.error
    assert f"gc {gc.isenabled()} {gc.get_threshold()}" in report.output.text, report.output


HELPER = "import torch\nSCALE = {scale}\ndef helper(x):\n    {body}\n"
USER = """
import torch
from helper import SCALE, helper

def fn(x):
    return helper(x) * SCALE

def inputs():
    return [torch.ones(3, requires_grad=True)]

print("SCALE", SCALE)
"""


def test_an_edited_helper_module_is_what_runs_next(warm: SyncWorker, tmp_path: Path) -> None:
    folder = tmp_path / "w3"
    folder.mkdir()
    snip = folder / "snip.py"
    snip.write_text(USER, encoding="utf-8")
    helper = folder / "helper.py"
    helper.write_text(HELPER.format(scale=2, body="return torch.sin(x)"), encoding="utf-8")
    first = _warm_run(warm, str(snip))
    assert first["error"] is None, first["error"]
    assert first["local_modules"] == [str(helper.resolve())]
    assert first["graph_break_count"] == 0
    # The helper now prints (a graph break) and scales by 3: both must show.
    helper.write_text(HELPER.format(scale=3, body='print("in helper")\n    return torch.sin(x)'), encoding="utf-8")
    second = _warm_run(warm, str(snip))
    assert "SCALE 3" in second["output"]["text"]
    assert essence(second) == essence(fresh_check(snip))
    assert second["graph_break_count"] >= 1


def test_check_from_another_folder_imports_the_snippets_helper(tmp_path: Path) -> None:
    folder = tmp_path / "w3"
    folder.mkdir()
    (folder / "helper.py").write_text(HELPER.format(scale=5, body="return x"), encoding="utf-8")
    (folder / "snip.py").write_text(USER, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "playground", "check", "w3/snip.py", "--json", "--no-timing", "--backend", "eager"],
        cwd=tmp_path,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=240,
    )
    report = json.loads(done.stdout)
    assert report["error"] is None, report["error"]
    assert "SCALE 5" in report["output"]["text"]
    # And as `python w3/snip.py` would: the snippet runs on its own from there too.
    alone = subprocess.run([sys.executable, "w3/snip.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert alone.returncode == 0 and "SCALE 5" in alone.stdout


def test_the_order_of_runs_does_not_matter(warm: SyncWorker, probe_dir: Path, fresh_probe: dict[str, Any]) -> None:
    """Every change at once, twice over, then the probe: still the fresh report."""
    path = probe_dir / "all.py"
    everything = "\n".join(v for k, v in SETUPS.items() if k not in ("default_device",))
    path.write_text(_setup_version(everything), encoding="utf-8")
    for _ in range(2):
        _warm_run(warm, str(path))
    probe = probe_dir / "snip.py"
    probe.write_text(PROBE, encoding="utf-8")
    assert essence(_warm_run(warm, str(probe))) == fresh_probe
