"""Guards on a real model, from real worker runs: torch's bookkeeping (the global module-hook
dicts, `__dict__` checks, import aliases) is folded with the internal guards, a module's guards
carry the path the snippet writes (`net.layers[0].weight`), and the Guards pane shows the guards a
next change can make fail first. tests/engine/test_explain_guards.py has the same rules on
captured BERT guard text; this file checks them on the installed torch (and transformers)."""

from __future__ import annotations

import importlib.util
import io
from pathlib import Path

import pytest
from rich.console import Console

from playground.engine.report import GuardDetail, Report
from playground.engine.settings import Settings
from playground.worker.capture.explain import guard_rank
from tests.engine.conftest import run_result

ROOT = Path(__file__).resolve().parents[2]

NET = """
import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(8, 8), nn.Linear(8, 8)])
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        for layer in self.layers:
            x = self.drop(torch.relu(layer(x)))
        return x


torch.manual_seed(0)
net = Block()


def fn(x):
    return net(x).sum()


def inputs():
    yield torch.randn(4, 8)
"""
FN_LINE = 22  # `return net(x).sum()`
BOOKKEEPING = ("__import_", "_global_forward_hooks", "_global_backward_hooks", "__dict__", "__builtins_dict")


def _pane(report: Report) -> list[str]:
    from tui.panes.guards import render_guards

    console = Console(width=78, color_system=None, record=True, file=io.StringIO())
    console.print(render_guards(report))
    return [line.rstrip() for line in console.export_text().splitlines()]


def _guards(report: Report) -> list[GuardDetail]:
    assert report.error is None, report.error
    (entry,) = report.explanation.guards
    return list(entry.guards)


def test_a_module_called_from_fn_shows_its_paths_and_folds_torchs_hook_guards(worker, snippet):
    path = snippet(NET)
    assert Path(path).read_text().splitlines()[FN_LINE - 1].strip() == "return net(x).sum()"
    report = run_result(worker, path, Settings(backend="eager")).report
    guards = _guards(report)
    hooks = [g for g in guards if "_global_forward_hooks" in g.check]
    assert hooks and all(g.internal for g in hooks), "torch guards the global module hooks on every module call"
    visible = [g for g in guards if not g.internal]
    for g in visible:
        assert not any(word in g.check for word in BOOKKEEPING), g
    args = {g.arg: g for g in visible}
    assert "net.layers[0].weight" in args and "net.layers[1].bias" in args
    assert guard_rank(args["x"].kind, args["x"].arg, args["x"].check) == 0
    assert guard_rank(args["net.drop.training"].kind, "net.drop.training") == 1
    lines = _pane(report)
    assert lines[0] == "entry 0/0  fn"
    # the call's shape first (torch records it where Linear reads it: no snippet line), the
    # module's values next, then the snippet's lines, the structure folded
    assert lines[1] == " no line: x: float32 size=[4, 8]", lines
    assert lines[2].startswith(" modules: net.drop.p == 0.1;") and "net.drop.training" in lines[2] + lines[3], lines
    assert f" line {FN_LINE}: net: type Block" in lines, lines
    assert any(line.startswith(" + ") and "structural guards on net" in line for line in lines), lines


@pytest.mark.skipif(importlib.util.find_spec("transformers") is None, reason="needs the models extra (transformers)")
def test_the_llama_gallery_snippet_puts_its_input_first_and_folds_the_library(worker):
    path = ROOT / "snippets" / "models" / "llama.py"
    report = run_result(worker, str(path), Settings(backend="eager", target="fn")).report
    guards = _guards(report)
    internal = sum(g.internal for g in guards)
    visible = [g for g in guards if not g.internal]
    assert internal > len(visible), (internal, len(visible))
    for g in visible:
        assert not any(word in g.check for word in BOOKKEEPING), g
    assert any(g.arg.startswith("model.model.layers[0].") for g in visible)
    lines = _pane(report)
    assert lines[1] == " no line: ids: int64 size=[2, 16]", lines[:3]
    assert lines[2].startswith(" modules: model.config."), lines[:3]
