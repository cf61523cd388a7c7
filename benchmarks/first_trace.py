"""The first trace in a process against a warm one: where a real model's save goes that torch's
floor does not pay.

docs/performance.md defines torch's floor as a warm process that has run the snippet once. A run
of the playground is a fresh fork of a template that has imported the snippet's libraries but has
never traced the snippet (tracing there would run torch ops, and a process forked after a
parallel op hangs on its own first one: ../shared/TORCH_NOTES.md). This script measures what that
difference costs, in one process and its forks, side by side:

- fork: a child forked from a process that has imported torch and the snippet's imports and
  has run nothing (as the template): `torch._dynamo.reset()`, the snippet executed as a fresh
  module (load), `torch.compile` of its target with its backend and every call of `inputs()`
  (trace + calls), timed in the child; one fork per save;
- first: the same, in the parent process itself, the first time it traces the snippet;
- warm: the same again in the parent, which has traced it before (the floor's case).

Then the first and a warm save under cProfile, and the seconds the first spends in what a warm
process has cached: torch._dynamo.funcname_cache (Dynamo tokenizes every source file its trace
meets, once per process, to name the function on a line) and the tokenizer under it.

    python benchmarks/first_trace.py [--saves 3] [--snippet snippets/models/llama.py]
"""

from __future__ import annotations

import argparse
import ast
import cProfile
import json
import os
import pstats
import statistics
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _imports(source: str) -> str:
    """The snippet's top-level import statements, as the template imports them once."""
    tree = ast.parse(source)
    return "\n".join(ast.unparse(n) for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom)))


def _save(path: str, source: str) -> tuple[float, float]:
    """One save as the floor makes it: (load seconds, trace + calls seconds)."""
    import torch

    torch._dynamo.reset()
    started = time.perf_counter()
    module = types.ModuleType("compile_playground_first_trace")
    module.__file__ = path
    exec(compile(source, path, "exec"), module.__dict__)  # noqa: S102 - the snippet, as a run loads it
    loaded = time.perf_counter()
    settings = getattr(module, "SETTINGS", {}) or {}
    names = ("fn",) if settings.get("target") == "fn" else ("model", "fn")
    target = next(getattr(module, n) for n in names if hasattr(module, n))
    compiled = torch.compile(target, backend=settings.get("backend") or "inductor")
    for call in module.inputs():
        compiled(*(call if isinstance(call, tuple) else (call,)))
    return loaded - started, time.perf_counter() - loaded


def _in_fork(work: Callable[[], Any]) -> Any:
    """`work()` in a child forked from this process, its JSON answer read back."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.close(read)
            os.write(write, json.dumps(work()).encode())
        except BaseException:  # noqa: BLE001 - a child never returns into the parent's code
            code = 1
        finally:
            os._exit(code)
    os.close(write)
    data = b""
    while chunk := os.read(read, 1 << 16):
        data += chunk
    os.close(read)
    _, status = os.waitpid(pid, 0)
    if status != 0 or not data:
        raise SystemExit("the forked save failed")
    return json.loads(data)


def _cached_share(path: str, source: str) -> dict[str, float]:
    """Seconds of one save (its total, under cProfile) and of them the cumulative time of
    Dynamo's per-process file cache (funcname_cache: tokenizing each source file the trace meets,
    once per process) and of imports made during the trace."""
    profile = cProfile.Profile()
    profile.enable()
    _save(path, source)
    profile.disable()
    stats: dict[Any, Any] = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    own = {"funcname_cache": 0.0, "imports": 0.0, "total": 0.0}
    for (filename, _, name), (_, _, tottime, cumtime, _) in stats.items():
        own["total"] += tottime
        if filename.endswith(os.path.join("_dynamo", "funcname_cache.py")) and name == "_add_file":
            own["funcname_cache"] += cumtime
        elif name == "_find_and_load":
            own["imports"] = max(own["imports"], cumtime)  # nested imports are inside the outermost
    return own


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--snippet", default=str(ROOT / "snippets" / "models" / "llama.py"))
    parser.add_argument("--saves", type=int, default=3)
    args = parser.parse_args(argv)
    path = str(Path(args.snippet).resolve())
    source = Path(path).read_text()
    exec(compile(_imports(source), path, "exec"), {})  # noqa: S102 - the template's pre-import
    import torch

    print(f"{Path(path).name}: torch {torch.__version__}, {torch.get_num_threads()} threads, {args.saves} saves each")
    # The forks first: the parent has run no torch op yet, as the template has not.
    forks = [_in_fork(lambda: _save(path, source)) for _ in range(args.saves)]
    # A first and a second save under cProfile, in a fork of the process that never traced.
    shares = _in_fork(lambda: [_cached_share(path, source), _cached_share(path, source)])
    first = _save(path, source)
    warm = [_save(path, source) for _ in range(args.saves)]
    fork_trace = statistics.median(t for _, t in forks)
    warm_trace = statistics.median(t for _, t in warm)
    print(f"{'':24}{'load s':>10}{'trace+calls s':>16}")
    print(f"{'fork (never traced)':24}{statistics.median(x for x, _ in forks):10.3f}{fork_trace:16.3f}")
    print(f"{'first, in process':24}{first[0]:10.3f}{first[1]:16.3f}")
    print(f"{'warm (the floor)':24}{statistics.median(x for x, _ in warm):10.3f}{warm_trace:16.3f}")
    print(f"fork / warm, trace+calls: {fork_trace / warm_trace:.2f}x")
    cold, hot = shares
    for name, share in (("first", cold), ("next", hot)):
        print(
            f"under cProfile, the {name} save in a fork: {share['total']:.3f} s, of which Dynamo's funcname"
            f" cache {share['funcname_cache']:.3f} s and imports {share['imports']:.3f} s"
        )


if __name__ == "__main__":
    main()
