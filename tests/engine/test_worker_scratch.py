"""The worker's scratch folder (playground/engine/scratch.py): everything the worker tree writes
through TMPDIR lands in one folder, and no way of ending the worker leaves that folder behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from playground.engine import scratch
from playground.engine.settings import Settings
from playground.engine.sync import SyncWorker
from tests.requests import request_for

EAGER = Settings(backend="eager")
ROOT = Path(__file__).resolve().parents[2]

#: A snippet that leaves a temporary file behind on purpose, as a careless snippet (or a
#: compiler killed mid-compile) does, and prints where it went.
LITTERING = """
import tempfile
import torch

fd, LEFT = tempfile.mkstemp(suffix=".left")
print("left:", LEFT)

def fn(x):
    return x + 1

def inputs():
    return [(torch.ones(3),)]
"""


def _left(stdout: str) -> Path:
    line = next(line for line in stdout.splitlines() if line.startswith("left: "))
    return Path(line.removeprefix("left: "))


def _gone_within(path: Path, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return not path.exists()


def test_worker_env_keeps_inductor_cache_where_torch_puts_it(monkeypatch):
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR", raising=False)
    env: dict[str, str] = {}
    scratch.worker_env(env, "/x/compile-playground-worker-abc")
    assert env["TMPDIR"] == env[scratch.ENV] == "/x/compile-playground-worker-abc"
    cache = Path(env["TORCHINDUCTOR_CACHE_DIR"])
    assert cache.parent == Path(tempfile.gettempdir()) and cache.name.startswith("torchinductor_")
    # One the user chose is theirs.
    env = {"TORCHINDUCTOR_CACHE_DIR": "/mine"}
    scratch.worker_env(env, "/x/compile-playground-worker-abc")
    assert env["TORCHINDUCTOR_CACHE_DIR"] == "/mine"


def test_remove_touches_only_scratch_folders(tmp_path):
    other = tmp_path / "precious"
    other.mkdir()
    (other / "file").write_text("keep")
    scratch.remove(str(other))
    scratch.remove(None)
    scratch.remove("")
    assert (other / "file").read_text() == "keep"
    mine = Path(scratch.make())
    (mine / "x").write_text("go")
    shared = Path(scratch.inductor_cache_default())
    assert (mine / shared.name).resolve() == shared.resolve()  # the link below
    scratch.remove(str(mine))
    assert not mine.exists()
    assert shared.is_dir()  # what the link pointed to stays


#: Where torch, imported in a run, keeps its global Inductor files (the precompiled header).
HEADERS = """
import os
import tempfile
import torch
from torch._inductor.runtime.cache_dir_utils import default_cache_dir

print("tmp:", tempfile.gettempdir())
print("default:", os.path.realpath(default_cache_dir()))

def fn(x):
    return x + 1

def inputs():
    return [(torch.ones(3),)]
"""


def test_inductor_finds_its_global_folder_through_the_scratch_folder(worker, snippet):
    """The run's temporary folder is the scratch folder, yet Inductor's default folder (where its
    155 MB precompiled header is compiled once and kept) is the one a plain `python` uses, not a
    copy in the scratch folder that every worker compiled again and threw away."""
    report = worker.run(request_for(snippet(HEADERS), EAGER, timing=False)).report
    assert report.error is None, report.error
    said = dict(line.split(": ", 1) for line in report.output.text.splitlines() if ": " in line)
    folder = worker.client.channel.scratch
    assert folder and said["tmp"] == folder
    assert said["default"] == os.path.realpath(scratch.inductor_cache_default())
    assert not said["default"].startswith(os.path.realpath(folder) + os.sep)


def _littered(worker: SyncWorker, tmp_path: Path) -> tuple[str, Path]:
    """Start `worker`, run LITTERING on it; the snippet's path and the worker's scratch folder,
    which holds the file the run left."""
    path = tmp_path / "litter.py"
    path.write_text(textwrap.dedent(LITTERING))
    worker.start()
    folder = Path(worker.client.channel.scratch or "")
    assert folder.is_dir() and folder.name.startswith(scratch.PREFIX)
    left = _left(worker.run(request_for(str(path), EAGER, timing=False)).report.output.text)
    assert left.parent == folder and left.exists()
    return str(path), folder


def test_a_closed_worker_leaves_no_temporary_file(tmp_path):
    worker = SyncWorker(timeout_s=60)
    try:
        _, folder = _littered(worker, tmp_path)
    finally:
        worker.close()
    assert not folder.exists()


def test_a_template_killed_by_sigkill_leaves_no_folder(tmp_path):
    worker = SyncWorker(timeout_s=60)
    try:
        path, folder = _littered(worker, tmp_path)
        proc = worker.client.channel.proc
        assert proc is not None
        os.kill(proc.pid, signal.SIGKILL)
        # The next run finds the worker dead (or dying: then it says so, and the one after
        # restarts it, in a new folder, and answers).
        result = worker.run(request_for(path, EAGER, timing=False))
        if result.report.error is not None:
            assert result.report.error.kind == "worker", result.report.error
            result = worker.run(request_for(path, EAGER, timing=False))
        assert result.report.error is None
        assert not folder.exists()
        assert Path(worker.client.channel.scratch or "") != folder
    finally:
        worker.close()


CLIENT = """
import sys
from playground.engine.settings import Settings
from playground.engine.sync import SyncWorker
w = SyncWorker(timeout_s=60)
w.start()
print(w.client.channel.scratch, w.client.channel.proc.pid, flush=True)
sys.stdin.read()
"""


def test_a_client_killed_by_sigkill_leaves_no_folder():
    """The client never gets to remove it: the template, left without its pipe and sent
    SIGTERM by the kernel (PR_SET_PDEATHSIG), removes it on its way out."""
    client = subprocess.Popen(
        [sys.executable, "-c", CLIENT],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        assert client.stdout is not None
        folder_text, pid_text = client.stdout.readline().split()
        folder, template = Path(folder_text), int(pid_text)
        assert folder.is_dir()
        os.kill(client.pid, signal.SIGKILL)
        client.wait(10)
        assert _gone_within(folder, 20), "the template left its scratch folder behind"
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and os.path.exists(f"/proc/{template}"):
            time.sleep(0.05)
    finally:
        if client.poll() is None:
            client.kill()
        if client.stdin is not None:
            client.stdin.close()


def test_no_scratch_folder_leaves_the_environment_alone(monkeypatch):
    def full_disk(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tempfile, "mkdtemp", full_disk)
    assert scratch.make() is None
    env = {"TMPDIR": "/theirs", scratch.ENV: "/tmp/compile-playground-worker-not-ours"}
    scratch.worker_env(env, None)
    assert env == {"TMPDIR": "/theirs"}
