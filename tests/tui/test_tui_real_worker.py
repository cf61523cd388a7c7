"""The app on the real torch worker (backend eager, a few seconds): the fake's contract holds."""

from __future__ import annotations

import os
import time
from pathlib import Path

from tui_fakes import bar_text, pane_text, settle

from playground.engine.client import WorkerClient
from tui.engine.messages import SnippetChanged
from tui.factory import make_app

SNIPPET = '''"""Print in the middle: one graph break."""
import time
import torch

SETTINGS = {"backend": "eager"}


def fn(x):
    y = torch.sin(x)
    print("y", y.sum())
    return y.cos()


def inputs():
    time.sleep(SLEEP)
    return [(torch.ones(4),)]

SLEEP = 0.0
'''


def save(path: Path, text: str) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


async def test_real_worker_break_fix_and_superseded_run(tmp_path: Path):
    path = tmp_path / "printing.py"
    path.write_text(SNIPPET)
    app = make_app(path, engine=WorkerClient(timeout_s=60), watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, timeout=90)
        assert "graphs 2  breaks 1" in bar_text(app), bar_text(app)
        assert "BREAK" in pane_text(app, "source")
        assert "y tensor(" in pane_text(app, "output")

        # A run stuck for a minute is superseded by the next save and cancelled on the worker.
        save(path, SNIPPET.replace("SLEEP = 0.0", "SLEEP = 60.0"))
        app.post_message(SnippetChanged())
        await pilot.pause(1.0)
        assert app.main.view.run.kind == "running"
        started = time.monotonic()
        save(path, SNIPPET.replace('    print("y", y.sum())\n', ""))
        app.post_message(SnippetChanged())
        await settle(pilot, timeout=60)
        assert time.monotonic() - started < 30
        assert "graphs 1  breaks 0" in bar_text(app), bar_text(app)
        assert not app.main.view.stale

        await pilot.press("f")  # fullgraph on a clean function: still fine
        await settle(pilot, timeout=60)
        assert "graphs 1  breaks 0" in bar_text(app) and "done" in bar_text(app)


ITEM = """import torch

SETTINGS = {"backend": "eager"}
# CONFIG


def fn(x):
    y = x * 2
    n = y.sum().item()
    return y * n


def inputs():
    return [torch.ones(3)]
"""


async def test_real_worker_a_config_switch_does_not_outlive_its_save(tmp_path: Path):
    """The classic fix, then its removal: the screen must come back to what a fresh process says."""
    import json
    import subprocess
    import sys

    path = tmp_path / "item.py"
    path.write_text(ITEM)
    fresh = subprocess.run(
        [sys.executable, "-m", "playground", "check", str(path), "--json", "--no-timing"],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=240,
    )
    truth = json.loads(fresh.stdout)
    assert truth["graph_break_count"] >= 1  # .item() breaks by default
    expected = f"graphs {truth['graph_count']}  breaks {truth['graph_break_count']}"
    app = make_app(path, engine=WorkerClient(timeout_s=60), watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, timeout=90)
        assert expected in bar_text(app), bar_text(app)
        save(path, ITEM.replace("# CONFIG", "torch._dynamo.config.capture_scalar_outputs = True"))
        app.post_message(SnippetChanged())
        await settle(pilot, timeout=60)
        assert "breaks 0" in bar_text(app), bar_text(app)
        save(path, ITEM)
        app.post_message(SnippetChanged())
        await settle(pilot, timeout=60)
        assert expected in bar_text(app), bar_text(app)


async def test_real_worker_an_edited_helper_reruns_with_its_new_version(tmp_path: Path):
    (tmp_path / "helper.py").write_text("import torch\ndef helper(x):\n    return torch.sin(x)\n")
    path = tmp_path / "uses_helper.py"
    path.write_text(
        'import torch\nfrom helper import helper\nSETTINGS = {"backend": "eager"}\n'
        "def fn(x):\n    return helper(x) + 1\ndef inputs():\n    return [torch.ones(3)]\n"
    )
    app = make_app(path, engine=WorkerClient(timeout_s=60), watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, timeout=90)
        assert "graphs 1  breaks 0" in bar_text(app), bar_text(app)
        # Only the helper changes: the snippet's bytes are the same, and it must still rerun.
        save(tmp_path / "helper.py", 'import torch\ndef helper(x):\n    print("hi")\n    return torch.sin(x)\n')
        app.post_message(SnippetChanged())
        await settle(pilot, timeout=60)
        assert "breaks 0" not in bar_text(app) and "breaks" in bar_text(app), bar_text(app)
