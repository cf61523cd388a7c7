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

Attribution: a record belongs to the callable on top of the stack when it arrived (the calls
of a compiled callable nest only through the eager parts of another), kept as spans of the
run's one capture, so the program's totals are the capture as a whole.
"""

from __future__ import annotations

import functools
import os
import signal
import sys
import threading
import time
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch

from playground.engine.program import PROGRAM_TOGGLES, matches
from playground.worker.capture.records import RunCapture
from playground.worker.run.spine.calls import counting_around
from playground.worker.run.spine.failures import first_line

#: The settings a user can toggle over a program's own torch.compile arguments.
TOGGLABLE = PROGRAM_TOGGLES

_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__)) + os.sep
_OUR_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class ProgramStopped(BaseException):
    """A bound ended the program (--max-calls, --max-seconds). A BaseException, so that the
    program's own `except Exception` cannot swallow it."""

    def __init__(self, by: str, at: float) -> None:
        super().__init__(f"stopped by {by} at {at}")
        self.by = by
        self.at = at


class ProgramOsExit(BaseException):
    """The program called os._exit(code): in the run's process that would end the run before
    its report, so the call ends the program instead, like sys.exit (a process the program
    forked exits for real)."""

    def __init__(self, code: int) -> None:
        super().__init__(f"os._exit({code})")
        self.code = code


class Alarm:
    """--max-seconds for a program that stops calling its compiled callables (a long eager
    stretch): SIGALRM raises ProgramStopped wherever the program is. Between calls the bound is
    checked first (CompiledCallables), so this only fires on a stretch without calls."""

    GRACE_S = 0.5

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self.started = time.monotonic()
        self.previous: Any = None

    def __enter__(self) -> Alarm:
        if self.seconds:
            self.previous = signal.signal(signal.SIGALRM, self._expired)
            signal.setitimer(signal.ITIMER_REAL, self.seconds + self.GRACE_S)
        return self

    def __exit__(self, *exc: object) -> None:
        self.cancel()

    def _expired(self, signum: int, frame: types.FrameType | None) -> None:
        raise ProgramStopped("max_seconds", round(time.monotonic() - self.started, 3))

    def cancel(self) -> None:
        if self.seconds and self.previous is not None:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, self.previous)
            self.previous = None


class OsExitPatch:
    """os._exit, for the length of the program, raising ProgramOsExit in this process."""

    def __init__(self) -> None:
        self.original: Callable[[int], Any] | None = None

    def install(self) -> None:
        self.original = original = os._exit
        pid = os.getpid()

        def _exit(code: int) -> Any:
            if os.getpid() == pid and threading.current_thread() is threading.main_thread():
                raise ProgramOsExit(code)
            return original(code)

        os._exit = _exit  # type: ignore[assignment]

    def uninstall(self) -> None:
        if self.original is not None:
            os._exit = self.original  # type: ignore[assignment]
            self.original = None


def program_seconds(max_seconds: float | None, timeout_s: float | None) -> tuple[float | None, bool]:
    """How long the program may run: --max-seconds, else a third of the run's timeout (the
    eager reference runs it again afterwards, and a report of what ran beats a timeout that
    keeps nothing); and whether the timeout chose it."""
    if max_seconds:
        return max_seconds, False
    if timeout_s:
        return max(1.0, round(timeout_s / 3, 1)), True
    return None, False


@dataclass
class Made:
    """One compiled callable as the program made it."""

    index: int
    name: str
    kind: str
    file: str
    line: int | None
    options: dict[str, str]
    toggled: dict[str, str]
    #: The object handed to torch.compile (the function, module or bound method).
    original: Any = None
    calls: int = 0
    #: The program-wide number of its first call (the report's order); None: never called.
    first_call: int | None = None
    #: (records, trace, graphs) index ranges of the run's capture that arrived while it ran.
    spans: list[tuple[tuple[int, int], tuple[int, int], tuple[int, int]]] = field(default_factory=list)
    #: Why torch.compile was called unchanged, when it was (the counts are then the capture's).
    unwrapped: str = ""


@dataclass
class Bounds:
    """How long a program may run: calls of compiled callables, and seconds (None: unbounded)."""

    max_calls: int | None = None
    deadline: float | None = None
    started: float = field(default_factory=time.monotonic)


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
        on_return: Callable[[Made, int, float, int, Any], None] | None = None,
    ) -> None:
        self.capture = capture
        self.path = os.path.realpath(program_path)
        self.device = device
        self.overrides = overrides
        #: The one callable the overrides act on (engine/program.py `matches`); None: all.
        self.only = only
        self.bounds = bounds
        self.on_call = on_call
        #: Told of each call that returned: (callable, program-wide call number, seconds, graphs
        #: compiled during it, what it returned) - program_reference.py's record.
        self.on_return = on_return
        self.made: list[Made] = []
        self.calls = 0
        self._stack: list[Made] = []
        self._open: tuple[int, int, int] | None = None
        self._original: Callable[..., Any] | None = None
        self._thread = threading.get_ident()
        #: The callable an exception propagated out of first (by id of the exception).
        self.raised_in: dict[int, Made] = {}

    # --- the patch ----------------------------------------------------------------------------

    def install(self) -> None:
        self._original = original = torch.compile

        def compile(model: Any = None, *args: Any, **kwargs: Any) -> Any:  # noqa: A001 - torch's name
            return self._compile(model, *args, **kwargs)

        compile.__doc__ = original.__doc__
        compile.__wrapped__ = original  # type: ignore[attr-defined]
        torch.compile = compile

    def uninstall(self) -> None:
        if self._original is not None:
            torch.compile = self._original
            self._original = None

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
        file, line = self._caller()
        name, kind = _name_of(model)
        options = {k: _shown(v) for k, v in kwargs.items()}
        index = len(self.made) + 1
        effective, toggled = self._effective(kwargs) if matches(self.only, name, index) else (dict(kwargs), {})
        made = Made(index, name, kind, file, line, options, toggled, model)
        self.made.append(made)
        try:
            backend = self._counting_backend(effective)
        except Exception as exc:  # noqa: BLE001 - torch.compile raises its own error below
            backend = None
            made.unwrapped = f"not counted on its own: {first_line(str(exc))}"
        if backend is None or args:
            compiled = original(model, *args, **effective)
        else:
            rest = {k: v for k, v in effective.items() if k not in ("backend", "mode", "options")}
            guard_filter = (effective.get("options") or {}).get("guard_filter_fn")
            if guard_filter is not None:
                rest["options"] = {"guard_filter_fn": guard_filter}
            compiled = original(model, *args, backend=backend, **rest)
        return self._wrapped(made, compiled)

    def _effective(self, kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
        """The program's arguments with the toggled settings laid over, and what changed."""
        effective = dict(kwargs)
        toggled: dict[str, str] = {}
        for key in TOGGLABLE:
            if key not in self.overrides:
                continue
            now = self.overrides[key]
            was = kwargs.get(key, _DEFAULTS[key])
            if key == "mode" and now is not None and effective.get("options"):
                effective.pop("options")  # torch takes a mode or options, never both
            effective[key] = now
            if now != was:
                toggled[key] = f"{_plain(was)} → {_plain(now)}"
        if effective.get("mode") is not None and effective.get("backend", "inductor") != "inductor":
            effective.pop("mode")  # only Inductor takes a mode (a toggled backend keeps the program's)
        return effective, toggled

    def _counting_backend(self, effective: dict[str, Any]) -> Callable[..., Any] | None:
        """The program's backend, as torch.compile would build it, behind a counting wrapper;
        None where torch.compile must see the arguments itself (it raises on them, or they are
        the ahead-of-time path)."""
        backend = effective.get("backend", "inductor")
        mode, options = effective.get("mode"), effective.get("options")
        if mode is not None and options is not None:
            return None  # torch's own error
        options = dict(options) if isinstance(options, dict) else options
        if isinstance(options, dict):
            options.pop("guard_filter_fn", None)
            if options.pop("use_aoti", False):
                return None
        dynamic = effective.get("dynamic")
        if isinstance(backend, str):
            if backend == "inductor":
                real = torch._TorchCompileInductorWrapper(mode, options, dynamic)
            else:
                real = torch._TorchCompileWrapper(backend, mode, options, dynamic)
        elif callable(backend):
            real = (
                backend if mode is None and not options else torch._TorchCompileWrapper(backend, mode, options, dynamic)
            )
        else:
            return None
        return counting_around(real, self.capture, self.device)

    def _caller(self) -> tuple[str, int | None]:
        """The program's (or its own module's) file and line that called torch.compile: the
        first frame outside torch and this package (nn.Module.compile calls it from torch)."""
        frame = sys._getframe(1)
        while frame is not None:
            file = os.path.abspath(frame.f_code.co_filename)
            if not file.startswith((_TORCH_DIR, _OUR_DIR)) and "functools" not in os.path.basename(file):
                return file, frame.f_lineno
            frame = frame.f_back
        return "", None

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
            if threading.get_ident() != self._thread:
                return fn(*args, **kwargs)  # another thread's: not attributed
            self._check_bounds()
            self.calls += 1
            made.calls += 1
            if made.first_call is None:
                made.first_call = self.calls
            self._enter(made)
            seq, graphs, started = self.calls, len(self.capture.graphs), time.perf_counter()
            try:
                out = fn(*args, **kwargs)
                if self.on_return is not None:
                    _synchronize(self.device)
                    self.on_return(made, seq, time.perf_counter() - started, len(self.capture.graphs) - graphs, out)
                return out
            except BaseException as exc:
                self.raised_in.setdefault(id(exc), made)
                raise
            finally:
                self._leave()
                if self.on_call is not None:
                    self.on_call(made)

        try:
            functools.update_wrapper(call, fn)
        except (AttributeError, TypeError):
            pass
        return call

    def _check_bounds(self) -> None:
        bounds = self.bounds
        if bounds.max_calls is not None and self.calls >= bounds.max_calls:
            raise ProgramStopped("max_calls", self.calls)
        if bounds.deadline is not None and time.monotonic() >= bounds.deadline:
            raise ProgramStopped("max_seconds", round(time.monotonic() - bounds.started, 3))

    def _marks(self) -> tuple[int, int, int]:
        cap = self.capture
        return len(cap.records), len(cap.trace), len(cap.graphs)

    def _enter(self, made: Made) -> None:
        self._close_span()
        self._stack.append(made)
        self._open = self._marks()

    def _leave(self) -> None:
        self._close_span()
        self._stack.pop()
        self._open = self._marks() if self._stack else None

    def _close_span(self) -> None:
        if not self._stack or self._open is None:
            return
        now = self._marks()
        start = self._open
        self._stack[-1].spans.append(((start[0], now[0]), (start[1], now[1]), (start[2], now[2])))
        self._open = None

    def finish(self) -> None:
        """Close the spans still open (a bound or an exception ended a call midway)."""
        while self._stack:
            self._leave()

    # --- what each callable saw -----------------------------------------------------------

    def capture_of(self, made: Made) -> RunCapture:
        """The run's capture restricted to what arrived while `made` ran."""
        cap = self.capture
        records, trace, graphs = [], [], []
        for (r0, r1), (t0, t1), (g0, g1) in made.spans:
            records += cap.records[r0:r1]
            trace += cap.trace[t0:t1]
            graphs += cap.graphs[g0:g1]
        return RunCapture(
            snippet_path=cap.snippet_path,
            records=records,
            trace=trace,
            graphs=graphs,
            first_runs=cap.first_runs,
            backend_facts=cap.backend_facts,
        )

    def skipped_reason(self, made: Made) -> str:
        """Why a callable that was called compiled no graph, where torch's rules say."""
        target = made.original
        func = getattr(target, "__func__", None)
        if func is torch.nn.Module._call_impl:
            owner = target.__self__
            forward = getattr(type(owner), "forward", None)
            code = getattr(forward, "__code__", None)
            if code is not None and _skipped(code):
                return (
                    f"{made.name}.compile() compiles only the frames of its calls, and {made.name}.forward is "
                    f"torch's own code ({os.path.basename(code.co_filename)}), which Dynamo skips "
                    "(trace_rules); torch.compile(model) traces the module as a whole instead"
                )
        code = getattr(getattr(target, "forward", target), "__code__", None)
        if code is not None and _skipped(code):
            return f"Dynamo skips {code.co_name} ({os.path.basename(code.co_filename)}): trace_rules list it"
        return "Dynamo traced no tensor operation in it, or skipped its frames"


_DEFAULTS: dict[str, Any] = {"backend": "inductor", "fullgraph": False, "dynamic": None, "mode": None}


def _synchronize(device: str) -> None:
    """A call's time includes its GPU work, as torch.utils.benchmark's does."""
    if device.startswith("cuda") and torch.cuda.is_initialized():
        torch.cuda.synchronize()


def code_of(target: Any) -> types.CodeType | None:
    """The code object Dynamo caches a compiled callable's frames under: a function's, a bound
    method's, a module's forward (None: none found)."""
    owner = getattr(target, "__self__", None)
    if isinstance(owner, torch.nn.Module) and getattr(target, "__func__", None) is torch.nn.Module._call_impl:
        target = type(owner).forward
    elif isinstance(target, torch.nn.Module):
        target = type(target).forward
    target = getattr(target, "__func__", target)
    code = getattr(target, "__code__", None)
    return code if isinstance(code, types.CodeType) else None


def _skipped(code: types.CodeType) -> bool:
    try:
        from torch._dynamo import trace_rules

        return bool(trace_rules.check(code))
    except Exception:  # noqa: BLE001 - a private rule that moved: say nothing
        return False


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
