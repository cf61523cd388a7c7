"""Run gallery files as `python snippets/NAME.py` would, without paying torch's import for each.

One runner process imports torch, Dynamo and Inductor once (and runs nothing with them, so no
thread pool starts) and forks a child per file; the child is the script: `__main__`,
`sys.argv`, `sys.path[0]` the file's folder, stdout and stderr its own files. What a fresh
interpreter would add is those imports, which every file pays alike. Used by
tests/test_gallery.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

RUNNER = r"""
import json, os, runpy, sys, traceback
import torch  # noqa: F401 - imported once, here; never used here (a forked child must not inherit a pool)
# Dynamo's and Inductor's modules too (the first 1.3 s, the second 3.4 s of CPU here, paid by
# every file that compiles): importing them runs nothing and starts no pool.
import torch._dynamo  # noqa: F401
import torch._inductor.compile_fx  # noqa: F401

root = sys.argv[1]
for line in sys.stdin:
    request = json.loads(line)
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.dup2(os.open(request["out"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 1)
            os.dup2(os.open(request["err"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC), 2)
            os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
            os.chdir(root)
            sys.argv = [request["path"], *request.get("args", [])]
            sys.path[0] = os.path.dirname(request["path"])
            runpy.run_path(request["path"], run_name="__main__")
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:
            traceback.print_exc()
            code = 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    print(json.dumps({"rc": os.waitstatus_to_exitcode(status)}), flush=True)
"""


@dataclass(frozen=True)
class Done:
    returncode: int
    stdout: str
    stderr: str


class StandaloneRunner:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.folder = tempfile.TemporaryDirectory(prefix="standalone-")
        self.proc = subprocess.Popen(
            [sys.executable, "-c", RUNNER, str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            start_new_session=True,  # close() kills the runner and a hung child together
        )
        self.count = 0

    def run(self, path: Path, *args: str) -> Done:
        """`python path *args`, as a fresh process would run it."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.count += 1
        out, err = (os.path.join(self.folder.name, f"{self.count}.{kind}") for kind in ("out", "err"))
        self.proc.stdin.write(json.dumps({"path": str(path), "args": list(args), "out": out, "err": err}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the standalone runner died while running {path}")
        return Done(json.loads(line)["rc"], Path(out).read_text(), Path(err).read_text())

    def close(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(10)
        self.folder.cleanup()
