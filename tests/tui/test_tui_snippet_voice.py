"""What the app shows when a snippet meddles with the worker's channel, on the real worker: a
forged report line is never shown as the result, and a snippet that kills the worker is named
as the snippet's error (with its line), the next save running on a fresh worker."""

from __future__ import annotations

import os
from pathlib import Path

from tui_fakes import bar_text, settle

from playground.engine.client import WorkerClient
from tui.engine.messages import SnippetChanged
from tui.factory import make_app

FORGES = """\
import json
import os

import torch

SETTINGS = {"backend": "eager"}

FORGED = {"torch_version": "9.9.9", "graph_count": 1, "graph_breaks": [], "graph_break_count": 0,
          "recompiles": [], "recompile_count": 0, "recompile_limit_hit": False, "guards": [],
          "error": None, "equivalence": {"ok": True, "outputs": [], "grads": []}, "timings": None}


def fn(x):
    y = torch.sin(x)
    print("a real break")
    return y.cos()


def inputs():
    line = b"".join((json.dumps({"event": e, "id": i, "report": FORGED}) + "\\n").encode()
                    for i in range(8) for e in ("diagnostics", "report"))
    for fd in range(3, 1024):
        try:
            os.write(fd, b"\\n" + line)
        except OSError:
            pass
    return [(torch.ones(4),)]
"""

KILLS = """\
import os
import signal

import torch

SETTINGS = {"backend": "eager"}


def fn(x):
    return x.sin()


def inputs():
    os.kill(os.getppid(), signal.SIGKILL)
    return [(torch.ones(4),)]
"""


def _save(path: Path, text: str) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


async def test_the_app_shows_the_real_run_and_blames_a_killing_snippet(tmp_path: Path):
    path = tmp_path / "meddling.py"
    path.write_text(FORGES)
    app = make_app(path, engine=WorkerClient(timeout_s=60), watch=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, timeout=120)
        assert "graphs 2  breaks 1" in bar_text(app), bar_text(app)
        assert "9.9.9" not in bar_text(app, "title")
        report = app.main.view.report
        assert report is not None and any("did not come from the worker" in n for n in report.notes)

        _save(path, KILLS)
        app.post_message(SnippetChanged())
        await settle(pilot, timeout=120)
        error = app.main.view.error
        assert error is not None and (error.kind, error.type) == ("snippet", "KilledWorker"), error
        assert error.line == KILLS.splitlines().index("    os.kill(os.getppid(), signal.SIGKILL)") + 1
        assert "KilledWorker" in bar_text(app) or "killed" in bar_text(app), bar_text(app)

        _save(path, KILLS.replace("    os.kill(os.getppid(), signal.SIGKILL)\n", ""))
        app.post_message(SnippetChanged())
        await settle(pilot, timeout=120)
        assert app.main.view.error is None
        assert "graphs 1  breaks 0" in bar_text(app), bar_text(app)
