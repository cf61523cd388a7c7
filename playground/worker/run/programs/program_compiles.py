"""Every compiled callable a program makes: torch.compile patched for the length of the run, so
that each call of it (a plain call, a decorator with or without arguments, nn.Module.compile(),
a bound method) is recorded with where it was made and what the program asked for, compiled
behind a counting backend, and called through a wrapper that counts its calls and marks which
of torch's records arrived while it ran. Worker-side.

Why a patch and not a hook: torch says nothing about which torch.compile result a graph, a
break or a recompile belongs to (its callbacks name the frame, never the callable). The wrapper
is invisible to Dynamo: it carries torch's own `_torchdynamo_inline` (functools.wraps copies
it), so a compiled region that calls another compiled callable inlines the original, as it
would in a plain `python FILE`.

Observe, never perturb: torch.compile itself runs with the program's own arguments, and only
the backend torch builds from them reaches `torch._dynamo.optimize` behind a counting one
(`CountingBackend`, also for the program's own `torch._dynamo.optimize` calls). Dynamo keys its
cache on the backend (a cache entry made under another backend is a BACKEND_MATCH recompile),
and compares backends with `==`; torch.compile makes a new backend object per call that
compares equal to another call's with the same arguments, so the counting backends are shared
by every call whose backends compare equal and compare as those do: the program makes the
graphs, recompiles and cache hits it makes under `python FILE`.

Attribution: a record belongs to the callable on top of its thread's stack when it arrived (the
calls of a compiled callable nest only through the eager parts of another; Dynamo compiles in
the calling thread), kept beside each of the capture's lists (`Owned`), so the program's totals
are the capture as a whole and what arrived outside every call (compiled autograd's backward
graphs, a `with torch._dynamo.optimize(...)` block) counts in the totals only.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

import torch

from playground.engine.program import PROGRAM_TOGGLES, matches
from playground.worker.capture import call_entries
from playground.worker.capture.records import RunCapture
from playground.worker.run.programs import program_bench
from playground.worker.run.programs.made import Bounds, CountingBackend, Made, Owned, same_backend
from playground.worker.run.programs.stops import ProgramOsExit, ProgramStopped
from playground.worker.run.spine.calls import counting_around

#: The settings a user can toggle over a program's own torch.compile arguments.
TOGGLABLE = PROGRAM_TOGGLES

_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
_OUR_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class CompiledCallables:
    """The patch and what it recorded. `overrides` holds the settings the user toggled (only
    those), which replace the program's own arguments in every torch.compile call."""

    def __init__(
        self,
        capture: RunCapture,
        program_path: str,
        device: str,
        overrides: dict[str, Any],
        bounds: Bounds,
        on_call: Callable[[Made], None] | None = None,
        only: str | None = None,
        on_return: Callable[[Made, float, int, Any], None] | None = None,
    ) -> None:
        self.capture = capture
        self.path = os.path.realpath(program_path)
        self.device = device
        self.overrides = overrides
        #: The one callable the overrides act on (engine/program.py `matches`); None: all.
        self.only = only
        self.bounds = bounds
        self.on_call = on_call
        #: Told of each outermost call that returned in the program's main thread: (callable,
        #: perf_counter when it began, graphs compiled during it, what it returned) -
        #: program_reference.py's record (another thread's calls have no order to compare by).
        self.on_return = on_return
        self.made: list[Made] = []
        self.calls = 0
        #: The stop, once a bound ended the program (kept: a bare `except:` may swallow it).
        self.stopped: ProgramStopped | None = None
        self._local = threading.local()
        self._lock = threading.Lock()
        self._original: Callable[..., Any] | None = None
        self._optimize: Callable[..., Any] | None = None
        self._backends: list[CountingBackend] = []
        self._thread = threading.get_ident()
        #: The callable an exception propagated out of first (by id of the exception).
        self.raised_in: dict[int, Made] = {}
        #: Keep each callable's newest steady call for torch.utils.benchmark (program_bench.py).
        self.keep_steady = False
        #: No frame is traced in this process (the eager reference): the backends need not be
        #: made ready to compile.
        self.untraced = False
        for name in ("records", "trace", "graphs"):
            setattr(capture, name, Owned(getattr(capture, name), self._owner))
        # A program runs torch's and its own modules' code too: a break there is shown there.
        capture.own_break_lines = True

    # --- the patch ----------------------------------------------------------------------------

    def install(self) -> None:
        import torch._dynamo

        self._original = original = torch.compile
        self._optimize = optimize = torch._dynamo.optimize

        def compile(model: Any = None, *args: Any, **kwargs: Any) -> Any:  # noqa: A001 - torch's name
            return self._compile(model, *args, **kwargs)

        def optimize_(*args: Any, **kwargs: Any) -> Any:
            return self._optimize_call(*args, **kwargs)

        compile.__doc__ = original.__doc__
        compile.__wrapped__ = original  # type: ignore[attr-defined]
        optimize_.__doc__ = optimize.__doc__
        optimize_.__wrapped__ = optimize  # type: ignore[attr-defined]
        torch.compile = compile
        torch._dynamo.optimize = optimize_

    def uninstall(self) -> None:
        if self._original is not None:
            torch.compile = self._original
            self._original = None
        if self._optimize is not None:
            torch._dynamo.optimize = self._optimize
            self._optimize = None

    def _stack(self) -> list[Made]:
        stack = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        return stack

    def _owner(self) -> int:
        stack = getattr(self._local, "stack", None)
        return stack[-1].index if stack else 0

    def _compile(self, model: Any = None, *args: Any, **kwargs: Any) -> Any:
        original = self._original
        assert original is not None
        if model is None and not args:
            # The decorator with arguments: `@torch.compile(fullgraph=True)`.
            def decorate(fn: Any) -> Any:
                if fn is None:
                    return original(None, **kwargs)(fn)  # torch's own "Model can't be None"
                return self._compile(fn, **kwargs)

            return decorate
        file, line = caller()
        name, kind = _name_of(model)
        options = {k: _shown(v) for k, v in kwargs.items()}
        index = len(self.made) + 1
        effective, toggled = (
            laid_over(self.overrides, kwargs) if matches(self.only, name, index) else (dict(kwargs), {})
        )
        made = Made(index, name, kind, file, line, options, toggled, model)
        self.made.append(made)
        # torch.compile as the program called it (toggles laid over): only the backend it
        # builds is swapped, where it reaches torch._dynamo.optimize (`_optimize_call`).
        self._local.inside_compile = True
        try:
            compiled = original(model, *args, **effective)
        except BaseException:
            self.made.remove(made)  # torch refused it (an unknown backend): no callable made
            raise
        finally:
            self._local.inside_compile = False
        return self._wrapped(made, compiled)

    def _optimize_call(self, *args: Any, **kwargs: Any) -> Any:
        """torch._dynamo.optimize: from torch.compile (its backend counted), or the program's
        own call (counted, and what it decorates recorded as a callable of its own)."""
        optimize = self._optimize
        assert optimize is not None
        if args:
            backend, args = args[0], args[1:]
        else:
            backend = kwargs.pop("backend", "inductor")
        counted = self.counting(backend)
        result = optimize(counted if counted is not None else backend, *args, **kwargs)
        if getattr(self._local, "inside_compile", False):
            return result
        file, line = caller()
        options = {"backend": _shown(backend), **{k: _shown(v) for k, v in kwargs.items()}}
        return _Optimized(self, result, file, line, options)

    def counting(self, backend: Any) -> CountingBackend | None:
        """The shared counting backend for `backend` (one per set of equal backends); None
        where it cannot be looked up (torch._dynamo.optimize raises its own error)."""
        if isinstance(backend, CountingBackend):
            return backend
        try:
            if isinstance(backend, str):
                from torch._dynamo.backends.registry import lookup_backend

                real = lookup_backend(backend)
            elif callable(backend):
                real = backend
            else:
                return None
        except Exception:  # noqa: BLE001 - torch says it, with its own words
            return None
        for shared in self._backends:
            if same_backend(shared.real, real):
                return shared
        made = CountingBackend(real, counting_around(real, self.capture, self.device), untraced=self.untraced)
        self._backends.append(made)
        return made

    def made_by_optimize(self, fn: Any, file: str, line: int | None, options: dict[str, str]) -> Made:
        name, kind = _name_of(fn)
        made = Made(len(self.made) + 1, name, "optimize" if kind == "function" else kind, file, line, options, {}, fn)
        self.made.append(made)
        return made

    # --- the calls ----------------------------------------------------------------------------

    def _wrapped(self, made: Made, compiled: Any) -> Any:
        if isinstance(compiled, torch.nn.Module):
            # torch.compile(module) gives an OptimizedModule whose `forward` is the compiled
            # call (an instance attribute): counted there, the module stays the module.
            inner = compiled.__dict__.get("forward")
            if callable(inner):
                compiled.forward = self._counted(made, inner)
            else:
                made.unwrapped = made.unwrapped or "its calls are not counted (no forward to wrap)"
            return compiled
        if callable(compiled):
            return self._counted(made, compiled)
        return compiled

    def _counted(self, made: Made, fn: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            self._check_bounds()
            with self._lock:
                self.calls += 1
                number, its = self.calls, made.calls + 1
                made.calls = its
                if made.first_call is None:
                    made.first_call = self.calls
            stack = self._stack()
            stack.append(made)
            main = threading.get_ident() == self._thread
            # Only a call no other compiled callable's call holds is compared: under the eager
            # reference every nested call runs, compiled only those in eager parts.
            told = self.on_return if len(stack) == 1 and main else None
            graphs, at = len(self.capture.graphs), (len(self.capture.trace), len(self.capture.records))
            started = time.perf_counter()
            try:
                out = fn(*args, **kwargs)
                if told is not None:
                    compiled = len(self.capture.graphs) - graphs
                    told(made, started, compiled, out)
                    if self.keep_steady and not compiled and made.calls > 1:
                        program_bench.keep(made, fn, args, kwargs, time.perf_counter() - started)
                return out
            except BaseException as exc:
                self.raised_in.setdefault(id(exc), made)
                if not isinstance(exc, (ProgramStopped, ProgramOsExit)):
                    if not made.raised:
                        made.raised, made.raised_at = f"{type(exc).__name__}: {_first_line(exc)}", its
                    if told is not None:
                        # Kept in the sequence (so the two runs' calls still pair up), never compared.
                        told(made, started, 0, RAISED)
                raise
            finally:
                stack.pop()
                if main and len(self.capture.trace) > at[0]:  # torch traced during it: it may have compiled
                    call_entries.program_call(self.capture, number, made.original, args, kwargs, at)
                if self.on_call is not None and main:
                    self.on_call(made)

        try:
            functools.update_wrapper(call, fn)
        except (AttributeError, TypeError):
            pass
        return call

    def _check_bounds(self) -> None:
        if self.stopped is not None:
            raise ProgramStopped(self.stopped.by, self.stopped.at)
        bounds = self.bounds
        if bounds.max_calls is not None and self.calls >= bounds.max_calls:
            self.stop(ProgramStopped("max_calls", self.calls))
        if bounds.deadline is not None and time.monotonic() >= bounds.deadline:
            self.stop(ProgramStopped("max_seconds", round(time.monotonic() - bounds.started, 3)))

    def stop(self, stop: ProgramStopped) -> None:
        """Keep the first stop, and raise it."""
        self.keep(stop)
        raise stop

    def keep(self, stop: ProgramStopped) -> None:
        """The run was stopped (the first stop is the one reported)."""
        if self.stopped is None:
            self.stopped = stop


def laid_over(overrides: dict[str, Any], kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """The program's arguments with the toggled settings laid over, and what changed."""
    effective = dict(kwargs)
    toggled: dict[str, str] = {}
    for key in TOGGLABLE:
        if key not in overrides:
            continue
        now = overrides[key]
        was = kwargs.get(key, _DEFAULTS[key])
        if key == "mode" and now is not None and effective.get("options"):
            effective.pop("options")  # torch takes a mode or options, never both
        effective[key] = now
        if now != was:
            toggled[key] = f"{_plain(was)} → {_plain(now)}"
    if effective.get("mode") is not None and effective.get("backend", "inductor") != "inductor":
        effective.pop("mode")  # only Inductor takes a mode (a toggled backend keeps the program's)
    return effective, toggled


def caller() -> tuple[str, int | None]:
    """The program's (or its own module's) file and line that called torch.compile: the
    first frame outside torch and this package (nn.Module.compile calls it from torch)."""
    frame = sys._getframe(1)
    while frame is not None:
        file = os.path.abspath(frame.f_code.co_filename)
        if not file.startswith((_TORCH_DIR, _OUR_DIR)) and "functools" not in os.path.basename(file):
            return file, frame.f_lineno
        frame = frame.f_back
    return "", None


class _Optimized:
    """What the program's own torch._dynamo.optimize(...) returned: as a decorator, what it
    decorates is a compiled callable of its own; as a context (`with`), torch's."""

    def __init__(
        self, made: CompiledCallables, inner: Any, file: str, line: int | None, options: dict[str, str]
    ) -> None:
        self._made = made
        self._inner = inner
        self._where = (file, line, options)

    def __call__(self, fn: Any) -> Any:
        compiled = self._inner(fn)
        if compiled is fn:
            return fn  # torch's _NullDecorator: nothing compiled
        file, line, options = self._where
        return self._made._wrapped(self._made.made_by_optimize(fn, file, line, options), compiled)

    def __enter__(self) -> Any:
        return self._inner.__enter__()

    def __exit__(self, *exc: Any) -> Any:
        return self._inner.__exit__(*exc)

    def __getattr_off__(self, name: str) -> Any:
        return getattr(self._inner, name)


#: What a call that raised "returned", for on_return: it keeps its place, with nothing to compare.
RAISED = object()

_DEFAULTS: dict[str, Any] = {"backend": "inductor", "fullgraph": False, "dynamic": None, "mode": None}


def _first_line(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001 - an exception whose str raises
        return ""
    return text.strip().splitlines()[0][:300] if text.strip() else ""


def _name_of(model: Any) -> tuple[str, str]:
    if isinstance(model, torch.nn.Module):
        return type(model).__name__, "module"
    owner = getattr(model, "__self__", None)
    func = getattr(model, "__func__", None)
    if owner is not None and func is torch.nn.Module._call_impl:
        return type(owner).__name__, "module.compile"
    if owner is not None and func is not None:
        return f"{type(owner).__name__}.{func.__name__}", "method"
    name = getattr(model, "__qualname__", None) or getattr(model, "__name__", None) or type(model).__name__
    return str(name), "function"


def _plain(value: Any) -> str:
    return value if isinstance(value, str) else _shown(value)


def _shown(value: Any) -> str:
    if callable(value) and not isinstance(value, type):
        return getattr(value, "__qualname__", None) or type(value).__name__
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
