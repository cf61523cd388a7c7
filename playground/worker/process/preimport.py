"""Libraries imported once: the installed packages a snippet imports are imported in the template
after its run, so that the next run's child inherits them and a save pays only for what changed
(`import transformers` is 1-1.5 s here, a run of a small model about as much again). Worker-side.

Only installed packages qualify: a top-level name the snippet imports whose module lies in a
site-packages (or dist-packages) folder, and that nothing in the snippet's own folder shadows
(the child puts that folder first on sys.path, as `python snippet.py` does). Never the snippet's
folder, its helpers, an editable checkout or anything else the user edits: those change between
saves, and an old copy in the template would hide the new one.

Isolation ("same bytes, same report", ../shared/contract.md) holds because an import that would
show in a later run is refused: the template compares torch's global state (default dtype, grad
mode, threads, RNG states, deterministic and TF32 flags, Dynamo's, Inductor's and functorch's
config) before and after, and what else a library may change at import that the next snippet
would meet (import_effects: the environment, a patched attribute of torch's modules and their
classes, torch's print options, a Python thread started, which a forked child would not have:
the library's own calls then wait on a thread that is not there), and probes that a forked child still runs a parallel op (an import must
not start an OpenMP pool: ../shared/TORCH_NOTES.md). When either fails, or the import hangs or
raises, the template cannot take it back: it starts over (reexec.py) with that name on a skip
list, so the runs import it themselves as a fresh process does.
"""

from __future__ import annotations

import ast
import contextlib
import hashlib
import importlib
import importlib.util
import os
import random
import signal
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from playground.worker.run.spine import loading

if TYPE_CHECKING:
    from playground.worker.process.channel import Channel
    from playground.worker.run.spine.request import WorkerRequest

#: Names a restarted template must not import (an earlier import changed torch's state).
SKIP_ENV = "COMPILE_PLAYGROUND_PREIMPORT_SKIP"
#: COMPILE_PLAYGROUND_PREIMPORT=0 turns it off (benchmarks/models_latency.py's comparison).
SWITCH_ENV = "COMPILE_PLAYGROUND_PREIMPORT"
#: A library that takes longer than this to import in the template is left to the runs.
IMPORT_TIMEOUT_S = 120


def enabled() -> bool:
    return os.environ.get(SWITCH_ENV, "1") != "0"


def skipped() -> set[str]:
    return {name for name in os.environ.get(SKIP_ENV, "").split(",") if name}


def imported_names(source: str) -> list[tuple[str, tuple[str, ...]]]:
    """Every absolute import in `source`, in order, as (module, names taken from it): `import a.b`
    is ("a.b", ()), `from a import b, c` is ("a", ("b", "c")) (nested ones too: a snippet may
    import inside `inputs()`); [] when it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return []
    found: list[tuple[str, tuple[str, ...]]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, ()) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.module, tuple(a.name for a in node.names if a.name != "*")))
    return list(dict.fromkeys(found))


def installed(name: str, snippet_dir: str) -> bool:
    """Whether `name` is an installed package the snippet's folder does not shadow (looked up
    without importing it)."""
    if not name.isidentifier() or name in ("playground", "torch"):
        return False
    if os.path.exists(os.path.join(snippet_dir, name + ".py")) or os.path.isdir(os.path.join(snippet_dir, name)):
        return False
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return False
    origin = getattr(spec, "origin", None) if spec is not None else None
    if not isinstance(origin, str) or not os.path.isabs(origin):
        return False  # built-in, frozen or namespace: nothing worth importing ahead
    parts = os.path.realpath(origin).split(os.sep)
    return "site-packages" in parts or "dist-packages" in parts


def wanted(request: WorkerRequest) -> list[tuple[str, tuple[str, ...]]]:
    """The imports of this request's snippet whose package the template should import for the
    next run (see imported_names), their package installed and not shadowed."""
    folder = os.path.dirname(os.path.abspath(request.run.path))
    skip = skipped()
    fresh: dict[str, bool] = {}
    out = []
    for module, names in imported_names(request.run.text):
        top = module.split(".")[0]
        if top not in fresh:
            fresh[top] = top not in skip and installed(top, folder)
        # vars(), not hasattr: hasattr on a lazy module would import the attribute right here.
        if fresh[top] and (module not in sys.modules or any(n not in vars(sys.modules[module]) for n in names)):
            out.append((module, names))
    return out


def _import(module: str, names: tuple[str, ...]) -> None:
    """`from module import names` without binding anything: a package's lazy attributes (how
    `transformers` defers its models, the expensive part) are loaded too."""
    loaded = importlib.import_module(module)
    for name in names:
        if not hasattr(loaded, name):  # a submodule not imported by its package
            with contextlib.suppress(ImportError):  # a misspelt name: the run reports it
                importlib.import_module(f"{module}.{name}")


def torch_state() -> dict[str, Any]:
    """Torch's global state a library could change at import, and what Dynamo's global-state
    guard and the experiment read: a change here would show in a later run."""
    import torch

    state: dict[str, Any] = {
        "default_dtype": str(torch.get_default_dtype()),
        "grad": torch.is_grad_enabled(),
        "threads": torch.get_num_threads(),
        "deterministic": (
            torch.are_deterministic_algorithms_enabled(),
            torch.is_deterministic_algorithms_warn_only_enabled(),
        ),
        "matmul_precision": torch.get_float32_matmul_precision(),
        # Without numpy: torch does not need it, and a machine may not have it.
        "rng": hashlib.sha256(bytes(torch.random.get_rng_state().tolist())).hexdigest(),
        "python_rng": hash(random.getstate()),
        "anomaly": torch.is_anomaly_enabled(),
        "mkldnn": torch.backends.mkldnn.enabled,
        "cudnn": (torch.backends.cudnn.enabled, torch.backends.cudnn.benchmark, torch.backends.cudnn.deterministic),
        "tf32": torch.backends.cuda.matmul.allow_tf32,
    }
    with contextlib.suppress(Exception):  # torch.get_default_device is newer than some builds
        state["default_device"] = str(torch.get_default_device())
    with contextlib.suppress(Exception):
        state["autocast"] = torch.is_autocast_enabled("cpu")
    for name in ("torch._dynamo.config", "torch._inductor.config", "torch._functorch.config"):
        module = sys.modules.get(name)
        if module is not None:
            copy = module.get_config_copy()
            state[name] = hashlib.sha256(repr(sorted((k, repr(v)) for k, v in copy.items())).encode()).hexdigest()
    return state


def _torch_modules() -> list[tuple[str, Any]]:
    return [(n, m) for n, m in list(sys.modules.items()) if (n == "torch" or n.startswith("torch.")) and m is not None]


def import_effects() -> dict[str, Any]:
    """What an import can change beyond torch's global state that a later run would see: the
    environment, the attributes of torch's modules and of the classes they define (a patched
    `F.gelu`, `Tensor.__repr__`), torch's print options, and the threads (a forked child has
    none of the template's but the one that forked: a library's worker thread is gone in it)."""
    attributes: dict[str, int] = {}
    for name, module in _torch_modules():
        try:
            items = list(vars(module).items())
        except TypeError:
            continue
        for attr, value in items:
            attributes[f"{name}.{attr}"] = id(value)
            # type(), not isinstance: a module attribute's __class__ may warn (reduce_op does).
            if issubclass(type(value), type) and vars(value).get("__module__") == name:
                for member, item in list(vars(value).items()):
                    attributes[f"{name}.{attr}.{member}"] = id(item)
    printing = sys.modules.get("torch._tensor_str")
    options = getattr(printing, "PRINT_OPTS", None)
    return {
        "environ": dict(os.environ),
        "attributes": attributes,
        "modules": {name for name, _ in _torch_modules()},
        "print_options": dict(vars(options)) if options is not None else {},
        "threads": _threads(),
    }


def _threads() -> int:
    """Python's threads: a library's code running beside the snippet's. A native thread torch
    starts (its OpenMP pool, when an import runs a parallel op) is the fork probe's business:
    torch's own pools start again in the child."""
    import threading

    return threading.active_count()


def effects_changed(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What changed between two import_effects(), in words: each environment variable and torch
    attribute by name (a few), the print options, the threads started."""
    out = []
    env_before, env_after = before["environ"], after["environ"]
    env = sorted(k for k in {*env_before, *env_after} if env_before.get(k) != env_after.get(k))
    if env:
        out.append("os.environ " + _few(env))
    old = before["attributes"]
    new_modules = after["modules"] - before["modules"]
    patched = []
    for key, ident in after["attributes"].items():
        if key in old:
            if old[key] != ident:
                patched.append(key)
        elif not _new_submodule(key, after["modules"], new_modules) and not key.startswith("torch.ops."):
            # (torch.ops makes a namespace on first access: `torch.ops.transformers` is a lookup)
            patched.append(key)
    patched += [key for key in old if key not in after["attributes"]]
    if patched:
        out.append("torch attributes " + _few(sorted(patched)))
    if before["print_options"] != after["print_options"]:
        out.append("torch's print options")
    if after["threads"] > before["threads"]:
        out.append(f"the threads ({after['threads'] - before['threads']} started)")
    return out


def _new_submodule(key: str, modules: set[str], new_modules: set[str]) -> bool:
    """An attribute an import of a torch submodule adds: the submodule on its package, or
    anything inside a module that did not exist before."""
    owner = key.rsplit(".", 1)[0]
    while owner and owner not in modules:
        owner = owner.rsplit(".", 1)[0] if "." in owner else ""
    return owner in new_modules or key in modules


def _few(names: list[str]) -> str:
    shown = ", ".join(names[:4])
    return f"({shown}{f' and {len(names) - 4} more' if len(names) > 4 else ''})"


def after_run(
    request: WorkerRequest, channel: Channel, pending: list[WorkerRequest], drop_spare: Callable[[], None]
) -> None:
    """Import, in the template, the installed packages the run's snippet imported, and warm what
    the run's trace met (trace_warmup.py: the modules it imported, the files Dynamo tokenized);
    start over (with the `pending` requests) without them when an import would show in a later
    run. Called between runs of an isolated template, before the next spare child is forked."""
    from playground.worker.process import limits, trace_warmup, warmup

    met = trace_warmup.read(request.id, request.run.path, skipped(), installed)  # its file removed in any case
    if not enabled():
        return
    names = wanted(request)
    if not trace_warmup.enabled() or limits.memory_short():
        met = trace_warmup.Met()
    taken = {module for module, _ in names}
    # The trace's own imports after the snippet's: the packages they belong to are loaded then.
    names += [(module, ()) for module in met.modules if module not in taken]
    if not names and not met.files:
        return
    drop_spare()  # forked without them
    started = time.perf_counter()
    if names:
        _import_checked(names, channel, pending)
    trace_warmup.tokenize(met.files)
    if met:
        trace_warmup.log(met, time.perf_counter() - started)
    warmup.freeze()  # the library's objects out of the collector's sight, as torch's are


def _import_checked(names: list[tuple[str, tuple[str, ...]]], channel: Channel, pending: list[WorkerRequest]) -> None:
    """`names` imported here; when an import raised, printed, hung or changed what a later run
    would see (torch_state, import_effects, the fork probe), start over without their packages
    (reexec.restart_unwarmed, which never returns)."""
    from playground.worker.process import reexec, warmup
    from playground.worker.process.output import OutputCapture

    before = torch_state()
    effects = import_effects()
    failed = ""
    capture = OutputCapture()
    try:
        with capture, _deadline(IMPORT_TIMEOUT_S):
            for module, taken in names:
                with contextlib.suppress(ImportError):  # not importable: the run reports it
                    _import(module, taken)
    except BaseException as exc:  # noqa: BLE001 - whatever it raised, it may have changed state
        failed = f"{type(exc).__name__}: {exc}"
    # A library that prints (or warns) at import shows it in a fresh process's output: imported
    # here, the runs would not print it.
    printed = capture.read().bytes
    if printed and not failed:
        failed = f"it printed {printed} bytes at import"
    tops = sorted({module.split(".")[0] for module, _ in names})
    # torch is never shadowed away from a run (a run without torch is no run of ours).
    loading.TEMPLATE_IMPORTS.update(top for top in tops if top != "torch")
    changed = [key for key, value in torch_state().items() if before.get(key) != value]
    changed += effects_changed(effects, import_effects())
    if failed or changed or not warmup.fork_probe():
        why = failed or (f"it changes {', '.join(changed)}" if changed else "a forked child hangs after it")
        # The successor inherits this environment: without what the library set in it.
        os.environ.clear()
        os.environ.update(effects["environ"])
        os.environ[SKIP_ENV] = ",".join(sorted(skipped() | set(tops)))
        shown = _few([module for module, _ in names])[1:-1]
        reexec.restart_unwarmed(
            channel,
            "COMPILE_PLAYGROUND_PREIMPORT_RESTARTED",
            pending,
            reason=f"importing {shown} in the template failed ({why[:200]}); the runs import it themselves",
        )


@contextlib.contextmanager
def _deadline(seconds: int) -> Any:
    """TimeoutError in this (the main) thread after `seconds`: a library that blocks at import
    (a network call) must not hold the template forever."""

    def expired(signum: int, frame: Any) -> None:
        raise TimeoutError(f"import took longer than {seconds} s")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
