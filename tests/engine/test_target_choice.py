"""Which target ran, when a snippet defines both `model` and `fn` (../shared/contract.md: `model`
wins unless SETTINGS["target"] == "fn", and the notes always say which ran). Real worker runs:
the settings are resolved from the snippet's own SETTINGS, as `check` and the app resolve them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from playground.engine.settings import Settings
from playground.engine.snippet_settings import resolve_settings
from tests.engine.conftest import run

ROOT = Path(__file__).resolve().parents[2]

#: `model` returns its output tensor; `fn` returns a scalar loss of it. The two targets give
#: outputs of different shapes, so the report's equivalence rows show which one ran.
BOTH = """
import torch
from torch import nn

SETTINGS = {{"backend": "eager"{target}}}

torch.manual_seed(0)
model = nn.Linear(4, 3)


def fn(x):
    return model(x).sum()


def inputs():
    yield torch.randn(2, 4)
"""


def _settings(path: str) -> Settings:
    resolved = resolve_settings(Path(path).read_text(encoding="utf-8"))
    assert resolved.problems == ()
    return resolved.settings


def _target_notes(report: dict) -> list[str]:
    return [note for note in report["notes"] if note.startswith("target:")]


def test_model_wins_by_default_and_the_notes_say_fn_was_not_called(worker, snippet):
    path = snippet(BOTH.format(target=""))
    report = run(worker, path, _settings(path))
    assert report["error"] is None
    assert report["settings"]["target"] is None
    assert report["graph_count"] == 1
    assert len(report["equivalence"]["outputs"]) == 1  # the (2, 3) output of model
    (note,) = _target_notes(report)
    assert note.startswith("target: model (Linear) ran; fn was not called")
    assert 'SETTINGS["target"] = "fn"' in note


def test_settings_target_fn_runs_fn_and_compares_the_models_parameters(worker, snippet):
    path = snippet(BOTH.format(target=', "target": "fn"'))
    settings = _settings(path)
    assert settings.target == "fn"
    report = run(worker, path, settings)
    assert report["error"] is None
    assert report["settings"]["target"] == "fn"
    (note,) = _target_notes(report)
    assert note.startswith('target: fn ran, as target="fn" asks; model (Linear)')
    # fn is a plain function: the gradients compared are those of the model it calls.
    grads = {g["name"] for g in report["equivalence"]["grads"]}
    assert grads == {"weight.grad", "bias.grad"}, grads


def test_settings_target_model_is_named_as_the_choice(worker, snippet):
    path = snippet(BOTH.format(target=', "target": "model"'))
    report = run(worker, path, _settings(path))
    (note,) = _target_notes(report)
    assert 'as target="model" asks' in note


def test_a_single_target_gets_no_note(worker, snippet):
    path = snippet(BOTH.format(target="").replace("def fn(x):\n    return model(x).sum()\n", ""))
    report = run(worker, path, _settings(path))
    assert report["error"] is None and _target_notes(report) == []


def test_a_target_the_snippet_lacks_is_a_snippet_error(worker, snippet):
    path = snippet(BOTH.format(target=', "target": "fn"').replace("def fn(x):", "def step(x):"))
    report = run(worker, path, _settings(path))
    assert report["error"]["kind"] == "snippet"
    assert report["error"]["type"] == "MissingTarget"
    assert "defines no `fn`; it defines `model`" in report["error"]["message"]


@pytest.mark.parametrize("flag", [(), ("--target", "model")])
def test_check_prints_the_target_on_the_settings_line(snippet, flag):
    """The text report's settings line names the target when one is set; --target overrides
    the snippet's SETTINGS as every settings flag does."""
    path = snippet(BOTH.format(target=', "target": "fn"'))
    done = subprocess.run(
        [sys.executable, "-m", "playground", "check", "--no-timing", path, *flag],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    first = done.stdout.splitlines()[0]
    wanted = "target=model" if flag else "target=fn"
    assert wanted in first, first
    assert f"note: target: {wanted.split('=')[1]} " in done.stdout, done.stdout
