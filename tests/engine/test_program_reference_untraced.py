"""A program's eager reference makes its compiled callables as the program does, but traces no
frame: it does not pay for Inductor's start-up to make them (torch.compile asks an Inductor
backend for its config when it makes the callable, and that import is a second). Each case runs
in a fresh python, where nothing has imported Inductor yet."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pytestmark = pytest.mark.torch

SCRIPT = """\
import json, sys
import torch
from playground.worker.capture.records import RunCapture
from playground.worker.run.programs.made import Bounds
from playground.worker.run.programs.program_compiles import CompiledCallables
from playground.worker.run.programs.program_reference import EagerOnly

made = CompiledCallables(RunCapture(snippet_path="prog.py"), "prog.py", "cpu", {}, Bounds())
made.untraced = sys.argv[1] == "untraced"
made.install()
EagerOnly().install()
f = torch.compile(lambda x: x.sin() + 1)  # the default backend: inductor
torch.manual_seed(0)
m = torch.compile(torch.nn.Linear(2, 2), mode="max-autotune")
g = torch._dynamo.optimize("inductor")(lambda x: x * 3)
print(json.dumps({
    "f": f(torch.zeros(2)).tolist(),
    "m": list(m(torch.ones(2)).shape),
    "g": g(torch.ones(1)).tolist(),
    "made": [c.name for c in made.made],
    "inductor": "torch._inductor.compile_fx" in sys.modules,
}))
"""


def _run(mode: str) -> dict:
    done = subprocess.run([sys.executable, "-c", SCRIPT, mode], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_reference_makes_inductor_callables_without_importing_inductor() -> None:
    untraced = _run("untraced")
    assert untraced["inductor"] is False
    # The same callables made and run, eagerly, with the program's values.
    assert untraced["f"] == [1.0, 1.0]
    assert untraced["m"] == [2]
    assert untraced["g"] == [3.0]
    assert len(untraced["made"]) == 3
    # Where frames may be traced (the program's own run), torch imports it, as under python.
    assert _run("traced")["inductor"] is True
