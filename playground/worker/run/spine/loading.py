"""The load phase: the snippet's source run as a fresh module, its target and its calls.

Worker-side. The run's process is thrown away after it, so what loading changes (sys.path,
sys.modules) needs no undoing beyond the snippet's own module, which the warm-up reuses.
"""

from __future__ import annotations

import os
import random
import sys
import traceback
import types
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass
from typing import Any

import torch

from playground.engine.scratch import ADDED_ENV, ADDED_PYTHONPATH
from playground.worker.run.spine.context import RunContext
from playground.worker.run.spine.failures import RunFailure, failure

#: The top-level packages the template imported ahead of the runs (process/preimport.py); a
#: run's child inherits the set with the modules.
TEMPLATE_IMPORTS: set[str] = set()


#: The folder holding our own packages: the client puts it first on the worker's PYTHONPATH.
_OUR_ROOT = os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
)


def as_python_would(path: list[str], cwd: str | None = None, ours: str = _OUR_ROOT) -> list[str]:
    """The worker's sys.path as `python FILE` would have it, less the file's folder: without the
    folder the worker was started in (`python -m` puts it first; `python FILE` does not) and with
    our root last, where the run's own later imports still find it. A program run from elsewhere
    imported modules of the user's current folder that python would not find, and torch's logs
    named its files `.venv/lib/.../torch/...` where python prints `torch/...` (torch names a file
    by the first sys.path entry that holds it). Only the first of each is ours: the user's own
    PYTHONPATH may name them again."""
    out = list(path)
    started_in = os.path.abspath(cwd if cwd is not None else os.getcwd())
    for entry in (started_in, ours):
        found = next((i for i, p in enumerate(out) if p and os.path.abspath(p) == entry), None)
        if found is not None:
            del out[found]
    return [*out, ours]


def environ_as_given(env: MutableMapping[str, str]) -> None:
    """The environment as the user gave it: PYTHONPATH (pythonpath_as_given), and without the
    variables the worker set for torch's import that the user had not (worker/main.py: CUDA's
    check by NVML, Inductor compiling in one thread; torch has read both by now)."""
    pythonpath_as_given(env)
    for name in filter(None, env.pop(ADDED_ENV, "").split(",")):
        env.pop(name, None)


def pythonpath_as_given(env: MutableMapping[str, str]) -> None:
    """PYTHONPATH as the user gave it, less the entry the client put first for the worker's own
    import (scratch.ADDED_PYTHONPATH names it; channel.py sets it): a program's `subprocess.run([sys.executable, ...])`
    or a multiprocessing worker it spawns starts with the environment python would give it.
    sys.path, read at the worker's start, keeps our root (last: as_python_would)."""
    added = env.pop(ADDED_PYTHONPATH, None)
    if not added:
        return
    first, _, rest = env.get("PYTHONPATH", "").partition(os.pathsep)
    if first != added:
        return
    if rest:
        env["PYTHONPATH"] = rest
    else:
        env.pop("PYTHONPATH", None)


def unshadow(snippet_dir: str) -> None:
    """In a run's child: forget the packages the template imported that the snippet's own folder
    shadows (an earlier snippet elsewhere imported the installed `foo`; this one has a `foo.py`
    beside it), so that its import finds its own file, as `python snippet.py` would."""
    for name in TEMPLATE_IMPORTS:
        if os.path.exists(os.path.join(snippet_dir, name + ".py")) or os.path.isdir(os.path.join(snippet_dir, name)):
            for loaded in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
                del sys.modules[loaded]


@dataclass(frozen=True)
class Loaded:
    """What the load phase gives the calls: the module, what to compile, and its calls."""

    module: types.ModuleType
    target: Callable[..., Any]
    #: The nn.Module whose parameters the gradient check compares (None for a plain function).
    params_owner: torch.nn.Module | None
    calls: Iterator[Any]


class SnippetScope:
    """The snippet's module in sys.modules for the length of the run, and what it imported."""

    def __init__(self, path: str, name: str, track_imports: bool) -> None:
        self.path = path
        self.name = name
        self.track_imports = track_imports
        self.module: types.ModuleType | None = None
        #: sys.modules before the snippet ran: what it imported is the difference.
        self.modules_before: set[str] = set()

    def open(self) -> types.ModuleType:
        if self.track_imports:
            # As `python snippet.py` does: the snippet's folder first on sys.path, so that it
            # imports its helpers from wherever it is run.
            sys.path[:] = [os.path.dirname(self.path), *as_python_would(sys.path)]
            environ_as_given(os.environ)
            unshadow(os.path.dirname(self.path))
            self.modules_before = set(sys.modules)
        module = types.ModuleType(self.name)
        module.__file__ = self.path
        sys.modules[self.name] = module
        self.module = module
        return module

    def close(self) -> list[str]:
        """Drop the module; the files of the modules it imported (see local_modules)."""
        found = self.local_modules()
        if self.module is not None:
            sys.modules.pop(self.module.__name__, None)
        return found

    def local_modules(self) -> list[str]:
        """The files of the modules the snippet imported that are not part of Python, torch or
        an installed package: its helpers, which the app and `watch` also watch."""
        if not self.modules_before:
            return []
        installed = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
        installed.add(os.path.realpath(os.path.dirname(os.path.abspath(__file__))))  # playground itself
        installed |= _compiler_caches()  # Inductor's generated modules, imported from its cache
        found = set()
        for name in set(sys.modules) - self.modules_before:
            module = sys.modules.get(name)
            file = getattr(module, "__file__", None)
            if not isinstance(file, str) or module is self.module:
                continue
            real = os.path.realpath(file)
            if "site-packages" in real or "dist-packages" in real:
                continue
            if any(real.startswith(root + os.sep) for root in installed):
                continue
            found.add(real)
        return sorted(found)


def _compiler_caches() -> set[str]:
    """The folders Inductor writes and imports its generated code from (its cache)."""
    found = set()
    try:
        from torch._inductor.runtime.cache_dir_utils import cache_dir

        found.add(os.path.realpath(cache_dir()))
    except Exception:  # noqa: BLE001 - a torch without it: the default below
        pass
    import tempfile

    found.add(os.path.realpath(os.path.join(tempfile.gettempdir(), f"torchinductor_{_user()}")))
    return found


def _user() -> str:
    import getpass

    try:
        return getpass.getuser()
    except Exception:  # noqa: BLE001 - no user name: no such folder either
        return ""


def load(ctx: RunContext, scope: SnippetScope) -> types.ModuleType:
    """Compile and run the snippet's source in a fresh module."""
    ctx.progress("loading", "loading the snippet")
    code = compiled_source(ctx)
    module = scope.open()
    seed_everything()
    try:
        run_code(code, module)
    except BaseException as exc:  # noqa: BLE001 - SystemExit and KeyboardInterrupt included
        raise failure("snippet", exc, ctx.path, "the snippet raised while importing") from None
    return module


def run_code(code: types.CodeType, module: types.ModuleType) -> None:
    """Run the user's code (a snippet's module body or a whole program) in `module`: the one
    place the worker executes text it was given."""
    exec(code, module.__dict__)  # noqa: S102 - running the user's code is the product


def compiled_source(ctx: RunContext) -> types.CodeType:
    """The run's text as code (a snippet's or a program's); a syntax error is the snippet's."""
    try:
        return compile(ctx.request.run.text, ctx.path, "exec", dont_inherit=True)
    except SyntaxError as exc:
        raise RunFailure(
            "snippet",
            type(exc).__name__,
            f"{exc.msg} (line {exc.lineno})",
            exc.lineno,
            "".join(traceback.format_exception_only(exc)),
        ) from None


def prepare(ctx: RunContext, module: types.ModuleType) -> Loaded:
    """The loaded snippet's target and its calls (inputs() runs here)."""
    target, owner, note = _target(module, ctx.settings.target)
    if note:
        ctx.notes.append(note)
    return Loaded(module, target, owner, _calls(ctx, module))


def seed_everything() -> None:
    """Every generator a snippet may draw from starts from the same seed in every run, so that
    the same bytes print the same numbers (a fresh process seeds Python's from os.urandom)."""
    torch.manual_seed(0)
    random.seed(0)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(0)


def _target(module: types.ModuleType, chosen: str | None) -> tuple[Callable[..., Any], torch.nn.Module | None, str]:
    """What to compile, the module whose parameters the gradient check compares, and a note
    saying which target ran when the snippet defines both (empty otherwise)."""
    ns = module.__dict__
    has_model, has_fn = "model" in ns, "fn" in ns
    if chosen is not None and chosen not in ns:
        other = "fn" if chosen == "model" else "model"
        raise RunFailure(
            "snippet",
            "MissingTarget",
            f"target is {chosen!r} but the snippet defines no `{chosen}`"
            + (f"; it defines `{other}`" if other in ns else ""),
        )
    model = _checked_model(ns["model"]) if has_model and chosen != "fn" else None
    if model is not None:
        note = ""
        if has_fn:
            why = (
                'as target="model" asks'
                if chosen == "model"
                else 'model wins when both exist; SETTINGS["target"] = "fn" runs fn instead'
            )
            note = f"target: model ({_kind(model)}) ran; fn was not called ({why})"
        return model, model, note
    if has_fn:
        fn = ns["fn"]
        if not callable(fn):
            raise RunFailure("snippet", "TypeError", f"`fn` is not callable (it is a {type(fn).__name__})")
        owner = fn if isinstance(fn, torch.nn.Module) else None
        note = ""
        if has_model:
            # fn usually calls model (`return model(ids).loss`): its parameters are the ones
            # whose gradients are worth comparing.
            candidate = ns["model"]
            if owner is None and isinstance(candidate, torch.nn.Module):
                owner = candidate
            note = f'target: fn ran, as target="fn" asks; model ({_kind(candidate)}) is compiled only where fn calls it'
            if owner is candidate:
                note += ", and the gradient check compares its parameters"
        return fn, owner, note
    raise RunFailure(
        "snippet",
        "MissingTarget",
        "the snippet defines neither `model` (an nn.Module) nor `fn` (a callable)",
    )


def _checked_model(model: Any) -> torch.nn.Module:
    if not isinstance(model, torch.nn.Module):
        raise RunFailure(
            "snippet",
            "TypeError",
            f"`model` must be a torch.nn.Module instance, not {type(model).__name__}",
        )
    return model


def _kind(value: Any) -> str:
    return type(value).__name__


def _calls(ctx: RunContext, module: types.ModuleType) -> Iterator[Any]:
    factory = module.__dict__.get("inputs")
    if factory is None:
        raise RunFailure("snippet", "MissingInputs", "the snippet defines no `inputs()` function")
    if not callable(factory):
        raise RunFailure("snippet", "TypeError", "`inputs` must be a function returning the calls")
    try:
        calls = factory()
    except BaseException as exc:  # noqa: BLE001
        raise failure("snippet", exc, ctx.path, "inputs() raised") from None
    if isinstance(calls, torch.Tensor):
        calls = [calls]
    try:
        ctx.calls_total = len(calls)
    except TypeError:
        ctx.calls_total = None
    try:
        return iter(calls)
    except TypeError:
        raise RunFailure(
            "snippet",
            "TypeError",
            f"inputs() must return an iterable of calls, not {type(calls).__name__}",
        ) from None
