import time, os, hashlib
from pathlib import Path
import pytest
from tests.faults import FAULTS, GOOD, child_pid, pid_alive
from tui.factory import make_app
from playground.client import WorkerClient

class C(WorkerClient):
    closed_done = False
    async def close(self, grace_s=2.0):
        print("CLOSE start", self._running, self.proc.returncode if self.proc else None)
        await super().close(grace_s)
        self.closed_done = True
        print("CLOSE done", self.proc.returncode)

@pytest.mark.parametrize("i", range(4))
async def test_child(tmp_path: Path, i):
    fault = next(f for f in FAULTS if f.name == "spawns_child")
    path = fault.make(tmp_path)
    eng = C(timeout_s=5)
    app = make_app(path, engine=eng, watch=True)
    async with app.run_test(size=(100, 30)) as pilot:
        while app.main.view.run.kind not in ("done", "error"):
            await pilot.pause(0.05)
        if i % 2:
            path.write_text(GOOD)
            await pilot.pause(0.3)
    pid = child_pid(tmp_path)
    print("AFTER", i, pid, pid_alive(pid), eng.closed_done, eng.proc.returncode, open(f"/proc/{pid}/stat").read()[:80] if pid_alive(pid) else "")
