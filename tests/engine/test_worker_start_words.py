"""A worker that dies before its hello is said in one line: the exception it raised, and where
it is torch's own import refusing the user's TORCH_LOGS, that variable named. The words are pure;
the last test starts a real worker under a TORCH_LOGS that torch refuses."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from playground.engine.channel import why_not_started

ROOT = Path(__file__).resolve().parents[2]

TORCH_REFUSES = """\
Traceback (most recent call last):
  File "/x/playground/worker/main.py", line 3, in <module>
    import torch
  File "/x/torch/_logging/_internal.py", line 1121, in _init_logs
    _update_log_state_from_env()
    raise ValueError(_invalid_settings_err_msg(settings))
ValueError: {space}
Invalid log settings: garbage, must be a comma separated list of fully
qualified module names, registered log names or registered artifact names.
For more info on various settings, try TORCH_LOGS="help"
Valid settings:
all, annotation, aot, aot_graphs, aot_graphs_effects, aot_joint_graph, async_compile, autograd
""".format(space="")


def test_torchs_refusal_of_torch_logs_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TORCH_LOGS", "garbage")
    said = why_not_started(TORCH_REFUSES)
    assert "\n" not in said and len(said) < 400
    assert said.startswith("import torch raised ValueError: Invalid log settings: garbage")
    assert "TORCH_LOGS='garbage' in the environment" in said


def test_another_exception_is_its_own_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TORCH_LOGS", raising=False)
    said = why_not_started('Traceback (most recent call last):\n  File "w.py", line 1\nImportError: no torch\n')
    assert said == "ImportError: no torch"
    assert why_not_started("killed\n  by a signal\n") == "killed by a signal"


@pytest.mark.torch
def test_check_under_a_torch_logs_torch_refuses_says_so_in_one_line(tmp_path: Path) -> None:
    snippet = tmp_path / "s.py"
    snippet.write_text("import torch\n\ndef fn(x):\n    return x + 1\n\ndef inputs():\n    return [(torch.ones(2),)]\n")
    env = {**os.environ, "TORCH_LOGS": "garbage"}
    done = subprocess.run(
        [sys.executable, "-m", "playground", "check", str(snippet)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=ROOT,
    )
    assert done.returncode == 2
    ours = [line for line in done.stderr.splitlines() if line.startswith("compile-playground:")]
    assert len(ours) == 1, done.stderr
    assert "Invalid log settings: garbage" in ours[0] and "TORCH_LOGS='garbage'" in ours[0]


def test_the_exception_line_alone_and_never_an_exit_functions(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TORCH_LOGS", raising=False)
    said = why_not_started(
        'Traceback (most recent call last):\n  File "w.py", line 1\n'
        "ModuleNotFoundError: No module named 'foo'\nW1207 12:00:00 some torch warning\n"
        "Exception ignored in atexit callback: <function f at 0x1>\n"
        'Traceback (most recent call last):\n  File "a.py", line 2\nKeyboardInterrupt: \n'
    )
    assert said == "ModuleNotFoundError: No module named 'foo'"
