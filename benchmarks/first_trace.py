"""The first trace in a process against a warm one: where a real model's save goes that torch's
floor does not pay, and what the template's trace warm-up (playground/worker/process/
trace_warmup.py) gives back of it.

docs/performance.md defines torch's floor as a warm process that has run the snippet once. A run
of the playground is a fresh fork of a template that has imported the snippet's libraries and run
the playground's warm-up on 4-element tensors, but has never traced the snippet (tracing there
would run torch ops, and a process forked after a parallel op hangs on its own first one:
../shared/TORCH_NOTES.md). This script measures what that difference costs, side by side:

- fork: a child forked per save from a template process that has imported torch and the
  snippet's imports and run the playground's warm-up (warmup.warm: eager; inductor too when the
  snippet's backend is inductor), as the worker's template: `torch._dynamo.reset()`, the snippet
  executed as a fresh module (load), `torch.compile` of its target with its backend and every
  call of `inputs()` (trace + calls), timed in the child;
- fork, trace warm-up: the same from a second such template that, after its first fork's save,
  imported the modules that save's trace imported and filled Dynamo's funcname_cache for the
  files it met (trace_warmup.tokenize, the worker's own function; modules under torch and
  site-packages only, as the worker keeps them), as the worker's template does between runs;
- first: the same, in the parent process itself, the first time it traces the snippet;
- warm: the same again in the parent, which has traced it before (the floor's case).

The two templates' forks alternate save by save, so that the machine's drift hits both alike.
Then the first and a warm save under cProfile, and the seconds the first spends in what a warm
process has cached: torch._dynamo.funcname_cache (Dynamo tokenizes every source file its trace
meets, once per process, to name the function on a line) and the imports under the trace.

    python benchmarks/first_trace.py [--saves 3] [--snippet snippets/models/llama.py] [--backend B]
"""

from __future__ import annotations

import argparse
import ast
import cProfile
import json
import os
import pstats
import statistics
import sys
import time
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _imports(source: str) -> str:
    """The snippet's top-level import statements, as the template imports them once."""
    tree = ast.parse(source)
    return "\n".join(ast.unparse(n) for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom)))


def _save(path: str, source: str, backend: str | None = None) -> tuple[float, float]:
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
    compiled = torch.compile(target, backend=backend or settings.get("backend") or "inductor")
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


def _cached_share(path: str, source: str, backend: str) -> dict[str, float]:
    """Seconds of one save (its total, under cProfile) and of them the cumulative time of
    Dynamo's per-process file cache (funcname_cache: tokenizing each source file the trace meets,
    once per process) and of imports made during the trace."""
    profile = cProfile.Profile()
    profile.enable()
    _save(path, source, backend)
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


class Template:
    """A process forked from this one that forks a child per save on request (its own forks'
    answers sent back on a pipe): a template of its own, beside another, from one parent."""

    #: The parent's ends of every template's pipes: a later template must not hold them (the
    #: earlier template would never see its orders end).
    parent_fds: list[int] = []

    def __init__(self, prepare: Callable[[], None]) -> None:
        self.orders_r, self.orders_w = os.pipe()
        self.answers_r, self.answers_w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:
            code = 0
            try:
                for fd in (self.orders_w, self.answers_r, *Template.parent_fds):
                    os.close(fd)
                prepare()
                with os.fdopen(self.orders_r) as orders, os.fdopen(self.answers_w, "w") as answers:
                    for line in orders:
                        work = ORDERS[line.strip()]
                        answers.write(json.dumps(_in_fork(work)) + "\n")
                        answers.flush()
            except BaseException:  # noqa: BLE001 - a child never returns into the parent's code
                code = 1
            finally:
                os._exit(code)
        os.close(self.orders_r)
        os.close(self.answers_w)
        Template.parent_fds += [self.orders_w, self.answers_r]
        self.orders = os.fdopen(self.orders_w, "w")
        self.answers = os.fdopen(self.answers_r)

    def ask(self, order: str) -> Any:
        self.orders.write(order + "\n")
        self.orders.flush()
        line = self.answers.readline()
        if not line:
            raise SystemExit(f"the template's {order} failed")
        return json.loads(line)

    def close(self) -> None:
        self.orders.close()
        os.waitpid(self.pid, 0)


#: What a template's fork may be asked to do (filled in by main).
ORDERS: dict[str, Callable[[], Any]] = {}


def _met(before: set[str]) -> dict[str, Any]:
    """What this process's trace met, as a run's child writes it for its template."""
    cache = sys.modules["torch._dynamo.funcname_cache"].cache
    modules = {n: getattr(sys.modules[n], "__file__", None) for n in set(sys.modules) - before}
    return {"modules": {n: f for n, f in modules.items() if isinstance(f, str)}, "files": sorted(cache)}


def _warm_from(met: dict[str, Any], snippet: str) -> tuple[int, int, float]:
    """What the worker's template does between runs with what a run met: the modules (torch's
    and site-packages', outside the snippet's folder) imported, funcname_cache filled; (modules,
    files, seconds)."""
    import importlib

    from playground.worker.process import preimport, trace_warmup

    started = time.perf_counter()
    path = trace_warmup.met_path(os.getpid(), "first_trace")
    with open(path, "w") as fh:
        json.dump(met, fh)
    found = trace_warmup.read("first_trace", snippet, set(), preimport.installed)
    for name in found.modules:
        try:
            importlib.import_module(name)
        except ImportError:
            pass
    trace_warmup.tokenize(found.files)
    return len(found.modules), len(found.files), time.perf_counter() - started


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--snippet", default=str(ROOT / "snippets" / "models" / "llama.py"))
    parser.add_argument("--saves", type=int, default=3)
    parser.add_argument("--backend", help="instead of the snippet's own")
    args = parser.parse_args(argv)
    path = str(Path(args.snippet).resolve())
    source = Path(path).read_text()
    import gc

    gc.disable()  # as the worker's __main__: the imports' objects are frozen once, below
    exec(compile(_imports(source), path, "exec"), {})  # noqa: S102 - the template's pre-import
    import torch

    from playground.worker.capture.records import Capturer
    from playground.worker.process import warmup

    backend = args.backend or _settings(source).get("backend") or "inductor"
    capturer = Capturer()
    warmup.freeze()
    gc.enable()
    warmup.warm(capturer, "eager", False)  # as the worker's template, once
    if backend == "inductor":
        warmup.warm(capturer, "inductor", False)  # as the template before its first inductor run
    warmup.freeze()
    print(
        f"{Path(path).name}: torch {torch.__version__}, backend {backend}, {torch.get_num_threads()} threads, "
        f"{args.saves} saves each, load average {os.getloadavg()[0]:.2f}"
    )

    def save() -> Any:
        warmup.start_thread_pools()  # as the worker's spare child does before its run
        return _save(path, source, backend)

    def save_and_met() -> Any:
        before = set(sys.modules)
        warmup.start_thread_pools()
        return [_save(path, source, backend), _met(before)]

    ORDERS.update(save=save, met=save_and_met)
    warmed: dict[str, Any] = {}

    def trace_warmup() -> None:
        first, met = _in_fork(save_and_met)
        warmed["counts"] = _warm_from(met, path)
        warmup.freeze()

    ORDERS["counts"] = lambda: warmed.get("counts")
    plain, traced = Template(lambda: None), Template(trace_warmup)
    # The warmed template's first fork (its warm-up's source) is not one of its saves.
    plain.ask("save")
    forks: list[Any] = []
    warm_forks: list[Any] = []
    for _ in range(args.saves):  # alternated: the machine's drift hits both
        forks.append(plain.ask("save"))
        warm_forks.append(traced.ask("save"))
    modules, files, seconds = traced.ask("counts")
    plain.close()
    traced.close()
    # A first and a second save under cProfile, in a fork of the process that never traced.
    shares = _in_fork(lambda: [_cached_share(path, source, backend), _cached_share(path, source, backend)])
    first = _save(path, source, backend)
    warm = [_save(path, source, backend) for _ in range(args.saves)]
    fork_trace = statistics.median(t for _, t in forks)
    warmed_trace = statistics.median(t for _, t in warm_forks)
    warm_trace = statistics.median(t for _, t in warm)
    print(f"{'':28}{'load s':>10}{'trace+calls s':>16}   each")
    for label, rows in (("fork (never traced)", forks), ("fork, trace warm-up", warm_forks)):
        each = " ".join(f"{t:.3f}" for _, t in rows)
        print(
            f"{label:28}{statistics.median(x for x, _ in rows):10.3f}{statistics.median(t for _, t in rows):16.3f}   {each}"
        )
    print(f"{'first, in process':28}{first[0]:10.3f}{first[1]:16.3f}")
    print(f"{'warm (the floor)':28}{statistics.median(x for x, _ in warm):10.3f}{warm_trace:16.3f}")
    print(
        f"fork / warm, trace+calls: {fork_trace / warm_trace:.2f}x; with the trace warm-up "
        f"{warmed_trace / warm_trace:.2f}x; load average now {os.getloadavg()[0]:.2f}"
    )
    print(f"the trace warm-up: {modules} modules imported, {files} files tokenized, {seconds:.3f} s in the template")
    cold, hot = shares
    for name, share in (("first", cold), ("next", hot)):
        print(
            f"under cProfile, the {name} save in a fork: {share['total']:.3f} s, of which Dynamo's funcname"
            f" cache {share['funcname_cache']:.3f} s and imports {share['imports']:.3f} s"
        )


def _settings(source: str) -> dict[str, Any]:
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "SETTINGS" for t in node.targets):
            return ast.literal_eval(node.value)
    return {}


if __name__ == "__main__":
    main()
