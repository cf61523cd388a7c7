"""The worker's scratch folder: one temporary folder per worker, its TMPDIR, removed when the
worker ends. Torch-free.

Why: a worker is killed as a matter of course (a closed app, a cancelled run, a timeout), and
what it had in the system's temporary folder stayed there: the warm-up's snippet file, depyf's
dump, the requeue file, and the assembler files of a C++ compiler killed mid-compile (counted
here after a day of tests: 2,169 entries in /tmp). Everything the worker, its children and the
compilers they start write through TMPDIR now lands in one folder that the client removes after
the worker's process group is dead, and that the template removes itself when it outlives its
client (a client killed by SIGKILL closes the pipe, and the template leaves).
"""

from __future__ import annotations

import contextlib
import getpass
import os
import re
import shutil
import tempfile

PREFIX = "compile-playground-worker-"
#: The folder's path, in the worker's environment: the template removes only that folder.
ENV = "COMPILE_PLAYGROUND_SCRATCH"


#: The variable naming the entry the client put first on the worker's PYTHONPATH (channel.py),
#: so that a run gives the snippet's or program's own subprocesses the PYTHONPATH the user had.
ADDED_PYTHONPATH = "COMPILE_PLAYGROUND_ADDED_PYTHONPATH"
#: The variables the worker set for itself before importing torch that the user had not set
#: (worker/main.py), comma-separated: a run takes them off again, as it does the PYTHONPATH entry.
ADDED_ENV = "COMPILE_PLAYGROUND_ADDED_ENV"


def make() -> str | None:
    """A new scratch folder in the system's temporary folder (mode 0700); None when none can be
    made (a full or read-only disk): the worker then writes where it did before, and says so
    itself if that fails too."""
    try:
        folder = tempfile.mkdtemp(prefix=PREFIX)
    except OSError:
        return None
    _link_inductor_default(folder)
    return folder


def _link_inductor_default(folder: str) -> None:
    """Inside the scratch folder, a link named as Inductor's default folder, to that folder.

    Inductor's precompiled header (cpp_prefix.h: 155 MB, about 7 s of g++ here) lives in
    `default_cache_dir()/precompiled_headers`, fixed when Inductor is imported and global on
    purpose: it ignores TORCHINDUCTOR_CACHE_DIR. In the worker, default_cache_dir() is under
    TMPDIR, the scratch folder, so every worker compiled the header again on its first Inductor
    run and threw it away with the folder (measured: "starting Inductor" 9.3 s, 3.6 s with the
    link). Through the link, torch finds the header where a plain `python` puts it. Removing the
    folder removes the link, never what it points to (shutil.rmtree does not follow links).
    Without the link (a read-only temporary folder), each worker compiles its own, as before."""
    target = inductor_cache_default()
    with contextlib.suppress(OSError):
        os.makedirs(target, exist_ok=True)
        os.symlink(target, os.path.join(folder, os.path.basename(target)))


def inductor_cache_default() -> str:
    """Where Inductor keeps its cache when nothing says otherwise (torch's default_cache_dir:
    `torchinductor_<user>` in the temporary folder). Named explicitly for the worker, whose
    TMPDIR is its scratch folder: a cache in there would be thrown away with every worker, and
    each start would compile Inductor's warm-up cold (30 s here instead of 3)."""
    try:
        user = getpass.getuser()
    except (KeyError, ModuleNotFoundError, OSError):
        user = f"uid_{os.getuid()}"
    return os.path.join(tempfile.gettempdir(), "torchinductor_" + re.sub(r'[\\/:*?"<>|]', "_", user))


def worker_env(env: dict[str, str], folder: str | None) -> None:
    """Point the worker's temporary files at `folder`, Inductor's cache where it would be anyway.
    Without a folder, no inherited ENV either: the template removes the folder ENV names."""
    env.pop(ENV, None)
    if folder is None:
        return
    env.setdefault("TORCHINDUCTOR_CACHE_DIR", inductor_cache_default())
    env["TMPDIR"] = folder
    env[ENV] = folder


def remove(folder: str | None) -> None:
    """Remove a scratch folder and what is in it; never anything that is not one."""
    if folder and os.path.basename(folder.rstrip(os.sep)).startswith(PREFIX):
        with contextlib.suppress(OSError):
            shutil.rmtree(folder)
