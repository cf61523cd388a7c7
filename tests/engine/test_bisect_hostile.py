"""`compile-playground bisect` on hostile input: each ends with one line that blames the right
side, exit 2, nothing on stdout, no process of its own left and the file never written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.processes import any_running

ROOT = Path(__file__).resolve().parents[2]
LESSONS = ROOT / "snippets" / "bisect"

#: A post-grad pass that never returns: eager finishes, the compile hangs.
HANGS = """import time
import torch
from torch._inductor import config
from torch._inductor.custom_graph_pass import CustomGraphPass

SETTINGS = {"backend": "inductor", "fullgraph": True}


class Hang(CustomGraphPass):
    def __call__(self, graph):
        time.sleep(10**6)

    def uuid(self):
        return b"hang-1"


config.post_grad_custom_post_pass = Hang()


def fn(x):
    return torch.sin(x) + 1


def inputs():
    yield (torch.randn(8),)
"""

#: A wrong decomposition (so the first verdict fails) whose inputs() works for its first three
#: calls, across processes, then raises: the first verdict passes, a step's eager side fails.
FLAKY = """import os
import torch
from torch._inductor.decomposition import decompositions

SETTINGS = {"backend": "inductor", "fullgraph": True}
decompositions[torch.ops.aten.sin.default] = lambda x: torch.cos(x)
COUNTER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "count")


def fn(x):
    return torch.sin(x) + 1


def inputs():
    n = int(open(COUNTER).read()) if os.path.exists(COUNTER) else 0
    open(COUNTER, "w").write(str(n + 1))
    if n >= 3:
        raise RuntimeError("the data file is gone")
    yield (torch.randn(8),)
"""


def _bisect(path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    before = path.read_bytes()
    out = subprocess.run(
        [sys.executable, "-m", "playground.cli.main", "bisect", *extra, "--", str(path)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert path.read_bytes() == before
    assert not any_running(f"playground.worker.run.bisection.bisect {path}")
    return out


def _said(out: subprocess.CompletedProcess[str]) -> str:
    assert out.returncode == 2 and out.stdout == "", out.stderr[-2000:]
    return out.stderr.strip().splitlines()[-1]


def test_a_compile_that_hangs_is_stopped_at_the_timeout_and_blamed_on_the_compile(tmp_path: Path) -> None:
    path = tmp_path / "hangs.py"
    path.write_text(HANGS)
    said = _said(_bisect(path, "--timeout", "30"))
    assert said == "compile-playground bisect: compile error: the compiled run did not finish in 30 s"


def test_a_snippet_that_fails_on_a_later_step_is_its_error_not_a_culprit(tmp_path: Path) -> None:
    path = tmp_path / "flaky.py"
    path.write_text(FLAKY)
    said = _said(_bisect(path))
    assert said.startswith("compile-playground bisect: snippet error: the snippet failed on its own at step 1: ")
    line = next(i for i, row in enumerate(FLAKY.splitlines(), 1) if "raise RuntimeError" in row)
    assert said.endswith(f"RuntimeError: the data file is gone (line {line})")


def test_a_file_that_is_not_utf8_is_the_snippets_error(tmp_path: Path) -> None:
    path = tmp_path / "latin.py"
    path.write_bytes(
        b"# caf\xe9\nimport torch\n\ndef fn(x):\n    return x + 1\n\ndef inputs():\n    yield (torch.ones(2),)\n"
    )
    # What python itself says of it, the truth.
    python = subprocess.run([sys.executable, str(path)], capture_output=True, text=True)
    assert python.returncode != 0 and "SyntaxError" in python.stderr
    assert "snippet error: SyntaxError: " in _said(_bisect(path))


def test_a_file_named_like_an_option_is_bisected(tmp_path: Path) -> None:
    path = tmp_path / "--json"
    path.write_text((LESSONS / "agree.py").read_text())
    out = _bisect(path, "--json")
    assert out.returncode == 0, out.stderr[-2000:]
    assert '"bisection": null' in out.stdout


#: Agrees as written (fullgraph off: the print is a graph break); under --fullgraph the compile
#: refuses the break: the settings flags reach the steps.
BREAKS = """import torch

SETTINGS = {"fullgraph": False}


def fn(x):
    y = torch.sin(x)
    print("a graph break")
    return y + 1


def inputs():
    yield (torch.randn(8),)
"""


def test_the_settings_flags_reach_every_step(tmp_path: Path) -> None:
    path = tmp_path / "breaks.py"
    path.write_text(BREAKS)
    plain = _bisect(path, "--json")
    assert plain.returncode == 0 and '"bisection": null' in plain.stdout, plain.stderr[-2000:]
    said = _said(_bisect(path, "--fullgraph"))
    assert said.startswith("compile-playground bisect: compile error: the compiled run raised before any value"), said


def test_a_setting_the_bisection_has_not_is_refused_before_anything_runs(tmp_path: Path) -> None:
    from playground.engine.bisecting import bisect_command

    path = tmp_path / "agree.py"
    path.write_text((LESSONS / "agree.py").read_text())
    command = bisect_command(str(path), (), settings=(("backend", "eager"),))
    out = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0 and '"phase": "settings"' in out.stdout, out.stdout
    assert "no setting 'backend' for a bisection" in out.stdout


#: inputs() that works once per process: the eager side gets its calls, the compiled side's
#: inputs() raises (the snippet's failure, not the compile's).
ONCE = """import torch

MADE = []


def fn(x):
    return torch.sin(x) + 1


def inputs():
    MADE.append(1)
    if len(MADE) > 1:
        raise RuntimeError("inputs are gone")
    yield (torch.randn(8),)
"""


def test_inputs_that_raise_on_the_compiled_side_are_the_snippets_error(tmp_path: Path) -> None:
    path = tmp_path / "once.py"
    path.write_text(ONCE)
    said = _said(_bisect(path))
    line = next(i for i, row in enumerate(ONCE.splitlines(), 1) if "raise RuntimeError" in row)
    assert said == (
        "compile-playground bisect: snippet error: inputs() raised on the compiled run: "
        f"RuntimeError: inputs are gone (line {line})"
    ), said


def test_inputs_that_return_a_list_are_bisected_as_a_generator_is(tmp_path: Path) -> None:
    """The contract's inputs() returns an iterable of calls: a list (the app's own templates
    write one) is bisected as the generator of the lesson is, to the same culprit."""
    lesson = (LESSONS / "wrong_decomposition.py").read_text()
    listed = lesson.replace("    yield (torch.randn(8),)", "    return [(torch.randn(8),)]")
    assert listed != lesson
    path = tmp_path / "listed.py"
    path.write_text(listed)
    out = _bisect(path, "--json")
    assert out.returncode == 0, out.stderr[-2000:]
    found = json.loads(out.stdout.strip().splitlines()[-1])["bisection"]
    assert found["subsystem"] == "decomposition" and "aten.sin" in found["debug_info"]


def test_inputs_that_are_not_iterable_are_the_snippets_error(tmp_path: Path) -> None:
    path = tmp_path / "none.py"
    path.write_text("import torch\n\ndef fn(x):\n    return x + 1\n\ndef inputs():\n    return None\n")
    said = _said(_bisect(path))
    assert "snippet error" in said and "not iterable" in said
