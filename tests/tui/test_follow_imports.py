"""A follower runs nothing: in a fresh interpreter, the CLI's follow path shows a published run
without torch, depyf or any of the worker's modules ever imported, and without starting a
process (pyproject.toml's import contracts hold the same statically)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CODE = """
import asyncio, os, sys
import playground.cli.main, playground.cli.followcmd  # what `compile-playground follow` loads
from playground.engine.report import Report
from playground.engine.session import SessionWriter
from playground.engine.settings import Settings
from tui.workshop.follower import FollowApp

session = sys.argv[1]
writer = SessionWriter(session)
report = Report.from_dict({"settings": {}, "stage": "complete", "graph_count": 2, "graph_break_count": 1})
writer.publish(report, "x = 1\\n", Settings(), "demo.py")

async def main():
    app = FollowApp(session)
    async with app.run_test() as pilot:
        for _ in range(300):
            await pilot.pause(0.01)
            if app.shown_run == 1:
                break
        assert app.shown_run == 1, app.shown_run
        await pilot.press("2")
        assert app.main.deck.current == "breaks"

asyncio.run(main())
bad = sorted(m for m in sys.modules if m.split(".")[0] in ("torch", "depyf") or m.startswith("playground.worker"))

def parent(pid):
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rpartition(")")[2].split()[1]
    except OSError:
        return ""

kids = [p for p in os.listdir("/proc") if p.isdigit() and parent(p) == str(os.getpid())]  # a worker would be one
print("imported:", bad, "children:", kids)
sys.exit(1 if bad or kids else 0)
"""


def test_follower_imports_neither_torch_nor_the_worker(tmp_path: Path):
    done = subprocess.run(
        [sys.executable, "-c", CODE, str(tmp_path / "session")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
