"""Every private torch name the worker touches, in one place, with a version check.

torch.compile's diagnostics live behind private modules that drift between releases. Keeping
them here means a torch upgrade breaks one small file (and its test), not the whole engine.
Imported only by the worker process.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache
from typing import Any

import torch
import torch._dynamo
import torch._logging

#: Versions whose private hooks were checked against this module (major, minor).
TESTED_VERSIONS: tuple[tuple[int, int], ...] = ((2, 13), (2, 14))


def torch_version() -> tuple[int, int]:
    match = re.match(r"(\d+)\.(\d+)", torch.__version__)
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


def version_warning() -> str | None:
    """A note for reports when the installed torch is one these hooks were not checked on."""
    if torch_version() in TESTED_VERSIONS:
        return None
    tested = ", ".join(f"{a}.{b}" for a, b in TESTED_VERSIONS)
    return (
        f"torch {torch.__version__} is untested by compile-playground (tested: {tested}); diagnostics may be incomplete"
    )


# --- logging -------------------------------------------------------------------------------

#: The artifact loggers are named "<module>.__<artifact>"; these suffixes pick them out.
ARTIFACTS = ("graph_breaks", "recompiles", "guards")
#: Artifacts logged under another name that count as one of ARTIFACTS: with recompiles_verbose on,
#: torch logs every recompile to `__recompiles_verbose` instead of `__recompiles` (guards.py).
ARTIFACT_ALIASES = {"recompiles_verbose": "recompiles"}


def enable_artifact_logs() -> None:
    """What TORCH_LOGS=graph_breaks,recompiles_verbose,guards turns on, plus the dynamo warnings
    (recompile_limit) at their default level. recompiles_verbose lists the failing guard of every
    cache entry (with its user stack), where plain recompiles stops at the first entry's."""
    torch._logging.set_logs(graph_breaks=True, recompiles=True, recompiles_verbose=True, guards=True)


@contextmanager
def artifact_logs_off() -> Iterator[None]:
    """torch's logs at their defaults for a while, then ours again: with the guards artifact on,
    Dynamo hands a guard filter every value guard twice (measured on 2.13 and 2.14: 267 entries
    where a plain program's filter gets 139; the guard tree is the same)."""
    torch._logging.set_logs()
    try:
        yield
    finally:
        enable_artifact_logs()


def registered_logger_names() -> list[str]:
    from torch._logging._internal import log_registry

    return list(log_registry.get_log_qnames())


def torch_log_formatter() -> logging.Formatter:
    """The formatter TORCH_LOGS prints with, so our captured text reads exactly like it."""
    from torch._logging._internal import DEFAULT_FORMATTER

    return DEFAULT_FORMATTER


def trace_logger() -> logging.Logger:
    """The structured-trace logger (what TORCH_TRACE writes and tlparse reads)."""
    from torch._logging._internal import trace_log

    return trace_log


def artifact_of(record: logging.LogRecord) -> str | None:
    """ "graph_breaks" for a record of the graph_breaks artifact logger, etc."""
    name = record.name
    for alias, artifact in ARTIFACT_ALIASES.items():
        if name.endswith(f".__{alias}"):
            return artifact
    for artifact in ARTIFACTS:
        if name.endswith(f".__{artifact}"):
            return artifact
    return None


# --- counters, caches, backends -------------------------------------------------------------


def counters() -> Any:
    from torch._dynamo.utils import counters as _counters

    return _counters


def clear_run_state() -> None:
    """reset() leaves counters and the compilation-metrics deque alone: clear them too, or a
    run would report its predecessor's numbers."""
    torch._dynamo.reset()
    counters().clear()
    try:
        from torch._dynamo.utils import _compilation_metrics

        _compilation_metrics.clear()
    except (ImportError, AttributeError):
        pass


def forget_compile_threads() -> None:
    """In a forked child: drop Inductor's compile thread pool inherited from the template.

    torch resets its compile *process* pool after a fork (async_compile.after_fork), not the
    thread pool (AsyncCompile.pool, an lru_cache'd ThreadPoolExecutor) that C++ compiles are
    submitted to. A child that inherits one the template used (its Inductor warm-up compiled
    a kernel on a cold cache) holds an executor whose threads do not exist there: it sees
    them idle, starts none, and waits forever on its first C++ compile (measured: torch 2.13,
    a cold Inductor cache, a child forked after the template's warm-up)."""
    try:
        from torch._inductor.async_compile import AsyncCompile

        AsyncCompile.pool.cache_clear()
    except (ImportError, AttributeError):
        pass


@contextmanager
def compile_caches_disabled(disabled: bool) -> Iterator[None]:
    """Turn off Inductor's FX-graph and AOT-autograd caches (they survive dynamo.reset())."""
    if not disabled:
        yield
        return
    import torch._inductor.config as inductor_config

    patches: dict[str, Any] = {}
    for key in ("force_disable_caches", "fx_graph_cache", "fx_graph_remote_cache"):
        if hasattr(inductor_config, key):
            patches[key] = key == "force_disable_caches"
    with inductor_config.patch(patches):
        try:
            import torch._functorch.config as functorch_config

            ctx = functorch_config.patch(enable_autograd_cache=False)
        except (ImportError, AttributeError):  # pragma: no cover - older torch
            ctx = _nullcontext()
        with ctx:
            yield


@contextmanager
def _nullcontext() -> Iterator[None]:
    yield


@contextmanager
def deterministic_inductor_rng() -> Iterator[None]:
    """Make Inductor draw random numbers through eager's generator (fallback_random), so that
    dropout under the same seed agrees between eager and compiled."""
    import torch._inductor.config as inductor_config

    with inductor_config.patch(fallback_random=True):
        yield


def cache_counts() -> dict[str, int]:
    """Inductor FX-graph and AOT-autograd cache hits and misses since counters were cleared."""
    c = counters()
    inductor = c.get("inductor", {})
    aot = c.get("aot_autograd", {})
    return {
        "fxgraph_hit": int(inductor.get("fxgraph_cache_hit", 0)),
        "fxgraph_miss": int(inductor.get("fxgraph_cache_miss", 0)),
        "autograd_hit": int(aot.get("autograd_cache_hit", 0)),
        "autograd_miss": int(aot.get("autograd_cache_miss", 0)),
    }


#: Debug backends worth offering: the stages of torch's troubleshooting ladder (matrix --ladder),
#: which list_backends() hides behind its "debug" tag.
LADDER_DEBUG_BACKENDS = ("aot_eager_decomp_partition",)


def list_backends() -> list[str]:
    try:
        names = set(torch._dynamo.list_backends())
        names |= set(LADDER_DEBUG_BACKENDS) & set(torch._dynamo.list_backends(exclude_tags=()))
        return sorted(names)
    except Exception:  # noqa: BLE001 - a broken third-party backend must not kill the worker
        return []


def real_backend(
    name: str, mode: str | None, dynamic: bool | None, options: dict[str, Any] | None = None
) -> Callable[..., Any]:
    """The callable torch.compile(backend=name, mode=mode, options=options) would hand graphs
    to, so that a counting wrapper around it sees exactly what the chosen backend sees."""
    if name == "inductor":
        return torch._TorchCompileInductorWrapper(mode, options, dynamic)
    from torch._dynamo.backends.registry import lookup_backend

    return lookup_backend(name)


def eager_graph_code(compiled: Callable[..., Any]) -> Callable[..., Any]:
    """What Dynamo does with a backend's result right after the backend returns (output_graph,
    checked on 2.13 and 2.14): a lazy GraphModule (use_lazy_graph_module) or its `_lazy_forward`
    gets its Python code written now, and the real forward is called from then on. A backend
    that wraps the result hides it from Dynamo, so it must do the same itself."""
    try:
        from torch.fx._lazy_graph_module import _LazyGraphModule
    except ImportError:  # pragma: no cover - a torch without lazy graph modules
        return compiled
    owner = getattr(compiled, "__self__", None)
    if isinstance(compiled, _LazyGraphModule):
        _LazyGraphModule.force_recompile(compiled)
        return compiled
    if isinstance(owner, _LazyGraphModule) and getattr(compiled, "__name__", "") == "_lazy_forward":
        _LazyGraphModule.force_recompile(owner)
        return owner.forward
    return compiled


def current_compile_id() -> str | None:
    try:
        from torch._guards import CompileContext

        cid = CompileContext.current_compile_id()
        return str(cid) if cid is not None else None
    except Exception:  # noqa: BLE001
        return None


# --- graph-break registry ---------------------------------------------------------------------


@cache
def graph_break_registry() -> dict[str, dict[str, Any]]:
    """GB id -> {gb_type, explanation, hints}, from the JSON that ships inside the wheel, so
    hints work offline."""
    path = os.path.join(os.path.dirname(torch._dynamo.__file__), "graph_break_registry.json")
    try:
        with open(path, encoding="utf-8") as fh:
            raw = json.load(fh)
    except (OSError, ValueError):
        return {}
    out: dict[str, dict[str, Any]] = {}
    for gb_id, entries in raw.items():
        entry = entries[0] if isinstance(entries, list) and entries else entries
        if not isinstance(entry, dict):
            continue
        out[gb_id.upper()] = {
            "gb_type": entry.get("Gb_type", ""),
            "explanation": _clean_registry_text(entry.get("Explanation", "")),
            "hints": _join_hint_fragments(entry.get("Hints") or []),
        }
    return out


def _clean_registry_text(text: str) -> str:
    """The registry stores explanations as source text ("a " "b" + var): keep the words."""
    text = re.sub(r'"\s*"', "", text or "")
    text = re.sub(r"\s*\+\s*\w+$", "", text).strip().strip('"').strip()
    return re.sub(r"\s+", " ", text)


def _join_hint_fragments(hints: list[str]) -> list[str]:
    """Hints split across string literals ("Set x " "or y ") become one hint each."""
    out: list[str] = []
    pending = ""
    for hint in hints:
        pending += hint
        if not hint.endswith(" "):
            out.append(_clean_registry_text(pending))
            pending = ""
    if pending.strip():
        out.append(_clean_registry_text(pending))
    return out


@cache
def graph_break_ids_by_type() -> dict[str, str]:
    return {v["gb_type"]: k for k, v in graph_break_registry().items() if v["gb_type"]}


def trace_string_table() -> list[tuple[str, int]]:
    """The structured trace interns file names once per process; a trace file of one run needs
    the whole table at its top for tlparse to resolve them."""
    try:
        from torch._logging.structured import INTERN_TABLE
    except ImportError:  # pragma: no cover
        return []
    return sorted(INTERN_TABLE.items(), key=lambda kv: kv[1])


def trace_filenames() -> dict[int, str]:
    """Interned id -> file name: the structured trace's user stacks name files by id."""
    return {index: name for name, index in trace_string_table()}


# --- cache entries (which compiled entry served a call) ---------------------------------------


def target_code(target: Any) -> Any:
    """The code object whose cache entries serve calls of `target`: a module's forward (what
    torch.compile(module) compiles), a function's own code, or a callable object's __call__. A
    module whose forward is torch's own (nn.Sequential, nn.Linear) is compiled through the frame
    torch wraps around it (inline_wrapped): that frame's code."""
    if isinstance(target, torch.nn.Module):
        if inline_wrapped(target):
            return _inline_wrapper_code()
        return getattr(type(target).forward, "__code__", None)
    code = getattr(target, "__code__", None)
    if code is None:
        code = getattr(type(target).__call__, "__code__", None)  # a callable object: its class's __call__
    return code


def inline_wrapped(module: Any) -> bool:
    """Whether torch.compile(module) compiles the frame of `external_utils.wrap_inline`'s `inner`
    around the module instead of its forward: a forward in torch's own files, which Dynamo
    skips as a frame of its own (OptimizedModule._initialize, the same test on 2.13 and 2.14)."""
    import types

    try:
        from torch._dynamo import config, trace_rules

        if getattr(config, "wrap_top_frame", False):
            return True
        forward = module.forward
        return isinstance(forward, types.MethodType) and bool(trace_rules.check(forward))
    except Exception:  # noqa: BLE001 - a rule that moved: the forward, as before
        return False


@cache
def _inline_wrapper_code() -> Any:
    """The code of wrap_inline's `inner` (one code object shared by every wrapped callable; its
    frame sees `args`, `kwargs` and the wrapped `fn` as a free variable)."""
    try:
        from torch._dynamo import external_utils

        return external_utils.wrap_inline(lambda: None).__code__
    except Exception:  # noqa: BLE001
        return None


def frame_locals(target: Any, args: tuple[Any, ...]) -> dict[str, Any] | None:
    """The names the compiled frame sees on entry (what guards call L['name']), or None when
    the signature cannot bind these arguments."""
    import inspect

    try:
        if isinstance(target, torch.nn.Module):
            return dict(inspect.signature(type(target).forward).bind(target, *args).arguments)
        return dict(inspect.signature(target).bind(*args).arguments)
    except (TypeError, ValueError):
        return None


def guard_locals(target: Any, args: tuple[Any, ...]) -> dict[str, Any] | None:
    """What the guards of target_code(target)'s entries read for a call with `args`: the frame's
    locals, or for a module compiled through wrap_inline's frame, `args`, `kwargs` and the module
    as `fn` (measured on 2.13 and 2.14: its guards say L['args'][0], L['fn']._modules['0'])."""
    if isinstance(target, torch.nn.Module) and inline_wrapped(target):
        return {"args": tuple(args), "kwargs": {}, "fn": target}
    return _entry_locals(target, args)


def _entry_locals(target: Any, args: tuple[Any, ...]) -> dict[str, Any] | None:
    """The compiled frame's locals on entry, as its guards read them. Not frame_locals' view
    (the names a user passed): the code's own parameters (a decorator's `(*args, **kwargs)`,
    not the signature functools.wraps advertises), every default filled in, and the closure's
    free variables (the decorator's `func`). A transformers forward is all three: with the
    user's view, no entry's guards passed (KeyError on L['args'], then on L['func'])."""
    import inspect

    if isinstance(target, torch.nn.Module):
        fn, positional = type(target).forward, (target, *args)
    elif inspect.ismethod(target):
        fn, positional = target.__func__, (target.__self__, *args)
    elif inspect.isfunction(target):
        fn, positional = target, tuple(args)
    else:  # a callable object: its class's __call__ (target_code's choice)
        fn, positional = type(target).__call__, (target, *args)
    try:
        bound = inspect.signature(fn, follow_wrapped=False).bind(*positional)
    except (TypeError, ValueError):
        return None
    bound.apply_defaults()
    f_locals = dict(bound.arguments)
    code = getattr(fn, "__code__", None)
    for name, cell in zip(getattr(code, "co_freevars", ()), getattr(fn, "__closure__", None) or ()):
        try:
            f_locals[name] = cell.cell_contents
        except ValueError:  # a cell not yet filled: the frame has no value for it either
            pass
    return f_locals


def cache_entries(code: Any) -> list[Any]:
    """The code's compiled entries, most recently used first: torch moves the entry whose guards
    passed to the front on every hit (measured on 2.13: eval_frame's cache entry list)."""
    if code is None:
        return []
    try:
        from torch._dynamo.eval_frame import _debug_get_cache_entry_list

        return list(_debug_get_cache_entry_list(code))
    except Exception:  # noqa: BLE001 - a debug hook that moved must not break the run
        return []


def cache_entry_ids(code: Any) -> list[str]:
    return [str(entry.compile_id) for entry in cache_entries(code)]


def entry_accepts(code: Any, compile_id: str, f_locals: dict[str, Any] | None) -> bool | None:
    """Whether the entry's own guard manager passes these frame locals (None: could not ask)."""
    if f_locals is None:
        return None
    for entry in cache_entries(code):
        if str(entry.compile_id) == compile_id:
            try:
                return bool(entry.guard_manager.check(f_locals))
            except Exception:  # noqa: BLE001
                return None
    return None


def describe_value(value: Any) -> str:
    """A short, stable description of an argument: `float32[3, 8]` for a tensor, the value for
    a Python scalar, the type otherwise."""
    if isinstance(value, torch.Tensor):
        dtype = str(value.dtype).replace("torch.", "")
        grad = " requires_grad" if value.requires_grad else ""
        return f"{dtype}{list(value.shape)}{grad}"
    if value is None or isinstance(value, (bool, int, float, str)):
        text = repr(value)
        return text if len(text) <= 40 else text[:39] + "…"
    return type(value).__name__


# --- compile time per phase ---------------------------------------------------------------------

#: The structured trace's `compilation_metrics` fields that time one frame's compile, nested:
#: entire frame > backend compile (AOT autograd + Inductor) > Inductor > code generation >
#: the wait for C++/Triton compilation (`triton_compile_time_us`, also the C++ compile on CPU).
#: Measured on 2.13 and 2.14: seconds as `*_time_s`, microseconds as `*_us`.
_PHASE_FIELDS = {
    "entire": ("entire_frame_compile_time_s", "duration_us"),
    "backend": ("backend_compile_time_s", "aot_autograd_cumulative_compile_time_us"),
    "inductor": ("inductor_compile_time_s", "inductor_cumulative_compile_time_us"),
    "code_gen": ("code_gen_time_s", "inductor_code_gen_cumulative_compile_time_us"),
    "async_compile": ("", "triton_compile_time_us"),
}


def _metric_s(metrics: dict[str, Any], phase: str) -> float:
    seconds, micros = _PHASE_FIELDS[phase]
    value = metrics.get(seconds) if seconds else None
    if isinstance(value, (int, float)):
        return float(value)
    value = metrics.get(micros)
    return float(value) / 1e6 if isinstance(value, (int, float)) else 0.0


def phase_times(metrics: dict[str, Any], spans: dict[str, float] | None = None) -> dict[str, float]:
    """One frame's compile split into disjoint phases that sum to `total_s`: dynamo_s (bytecode
    tracing, guards, restarts), aot_s (backend compile outside Inductor: AOT autograd, or the
    whole backend for one without it), inductor_s (Inductor's passes and lowering), codegen_s
    (writing kernels and wrapper), compile_s (C++/Triton compilation: the wait on the async
    pool plus the `compile_file` runs made on the compiling thread), other_s (torch's own
    bookkeeping around the frame, e.g. logging these metrics). `spans` are the frame's chromium
    events summed by name (compile_phases.chromium_spans): `dynamo` is torch's outermost compile timer."""
    spans = spans or {}
    entire = _metric_s(metrics, "entire")
    backend = min(_metric_s(metrics, "backend"), entire)
    inductor = min(_metric_s(metrics, "inductor"), backend)
    code_gen = min(_metric_s(metrics, "code_gen"), inductor)
    compiling = min(_metric_s(metrics, "async_compile") + spans.get("compile_file", 0.0), code_gen)
    total = max(spans.get("dynamo", 0.0), entire)
    return {
        "dynamo_s": entire - backend,
        "aot_s": backend - inductor,
        "inductor_s": inductor - code_gen,
        "codegen_s": code_gen - compiling,
        "compile_s": compiling,
        "other_s": total - entire,
        "total_s": total,
    }


# --- the code Dynamo wrote (via depyf) --------------------------------------------------------


def depyf_version() -> str | None:
    """depyf's version, or None when it is not installed (the view then says so)."""
    try:
        from importlib.metadata import version

        return version("depyf")
    except Exception:  # noqa: BLE001 - PackageNotFoundError, or a broken install
        return None


@contextmanager
def dynamo_code_dumped(directory: str) -> Iterator[None]:
    """depyf.prepare_debug(directory) around the compiled calls: on exit it writes, per compiled
    code object, `full_code_for_<fn>_N.py` with the guard functions, the transformed code and the
    resume functions as Python (checked with depyf 0.20 on torch 2.13 and 2.14). Its "you are
    trying to debug" warning is dropped: the view says what it is."""
    import warnings

    import depyf

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*debug `torch.compile`.*")
        warnings.filterwarnings("ignore", message=".*does not have any compiled cache entries.*")
        with depyf.prepare_debug(directory):
            yield


#: The config modules a run's settings may patch, by the prefix of a settings key.
CONFIG_MODULES = {"dynamo": "torch._dynamo.config", "inductor": "torch._inductor.config"}


def error_on_graph_break() -> Any:
    """A context in which a graph break raises (torch._dynamo.error_on_graph_break, 2.8+)."""
    return torch._dynamo.error_on_graph_break(True)


#: The methods of Dynamo's InstructionTranslator that run while it traces one frame of user code.
_TRACER_METHODS = frozenset(
    {"step", "run", "inline_call_", "run_ctx_mgr", "call_function", "inline_user_function_return"}
)


def dynamo_tracing_at(frame: Any, snippet_path: str, look: int = 400) -> tuple[int, int] | None:
    """Where Dynamo is tracing, read from another thread: (the snippet line of the innermost
    frame it is tracing there, how many user frames deep it has inlined), from the stack `frame`
    (the main thread's, from sys._current_frames()); None when it is not tracing the snippet.
    The translator is the `self` of its step()/run() frame; an inlined frame's translator keeps
    its caller's in `.parent` (torch/_dynamo/symbolic_convert.py, 2.13 and 2.14)."""
    tx = None
    while frame is not None and look > 0:
        if frame.f_code.co_name in _TRACER_METHODS and "symbolic_convert" in frame.f_code.co_filename:
            candidate = frame.f_locals.get("self")
            if candidate is not None and hasattr(candidate, "f_code") and hasattr(candidate, "lineno"):
                tx = candidate
                break
        frame, look = frame.f_back, look - 1
    if tx is None:
        return None
    line = None
    depth = 0
    while tx is not None and depth < 10_000_000:
        code = getattr(tx, "f_code", None)
        if line is None and code is not None and code.co_filename == snippet_path:
            line = getattr(tx, "lineno", None)
        tx = getattr(tx, "parent", None)
        depth += 1
    return (line, depth) if isinstance(line, int) and line > 0 else None


# --- compile anatomy: the config in force at compile time (issue 21) ---------------------------

#: The config modules whose values a compile reads, by the name the report gives them
#: (torch.utils._config_module.ConfigModule on 2.13 and 2.14: `_config[name].default`).
ANATOMY_CONFIG_MODULES = {
    "dynamo": "torch._dynamo.config",
    "inductor": "torch._inductor.config",
    "functorch": "torch._functorch.config",
    "compiler": "torch.compiler.config",
}


def config_not_default(backend: Any = None) -> list[tuple[str, str, Any, Any]]:
    """(module, name, value, default) for every config value that differs from torch's default
    now, with the Inductor options of `backend` (a _TorchCompileInductorWrapper: what `mode` and
    `options` patch inside compile_fx, which torch's own metrics miss) laid over. Compared by
    value: ConfigModule._is_default says "set" for a key a patch() once set back to its default."""
    import importlib

    out: dict[tuple[str, str], tuple[Any, Any]] = {}
    for short, qname in ANATOMY_CONFIG_MODULES.items():
        try:
            mod = importlib.import_module(qname)
            entries = mod._config  # type: ignore[attr-defined]
        except (ImportError, AttributeError):  # pragma: no cover - a torch without ConfigModule
            continue
        for name, entry in entries.items():
            # An alias reads another module's key (reported there); a default of a bare
            # object() is torch's "unset" sentinel, the real default living elsewhere.
            if getattr(entry, "alias", None) or type(entry.default) is object:
                continue
            try:
                value, default = getattr(mod, name), entry.default
                if value != default:
                    out[(short, name)] = (value, default)
            except Exception:  # noqa: BLE001 - a value that will not compare is left out
                continue
    options = getattr(backend, "config", None)
    if isinstance(options, dict):
        import torch._inductor.config as inductor_config

        entries = getattr(inductor_config, "_config", {})
        for name, value in options.items():
            entry = entries.get(name)
            default = entry.default if entry is not None else None
            if value != default:
                out[("inductor", name)] = (value, default)
    return [(m, n, v, d) for (m, n), (v, d) in sorted(out.items())]


@cache
def graph_break_hint_categories() -> dict[str, frozenset[str]]:
    """torch's hint categories (torch._dynamo.graph_break_hints, the same eight on 2.13 and 2.14:
    USER_ERROR, DYNAMO_BUG, DIFFICULT, FUNDAMENTAL, SUPPORTABLE, CAUSED_BY_EARLIER_GRAPH_BREAK,
    INFERENCE_MODE, SPARSE_TENSOR), each as the set of its full hint strings: a break's hints are
    `[*graph_break_hints.X, "specific hint", ...]`, so a hint equal to one of them names the category."""
    try:
        import torch._dynamo.graph_break_hints as hints
    except ImportError:  # pragma: no cover - a torch without the registry
        return {}
    out = {}
    for name in dir(hints):
        value = getattr(hints, name)
        if name.isupper() and isinstance(value, (list, tuple)):
            out[name] = frozenset(str(text).strip() for text in value)
    return out


# --- guard cost (issue 21) ----------------------------------------------------------------------


def guard_count(entry: Any) -> int | None:
    """The leaf guards of a cache entry's guard-manager tree (RootGuardManager and its child
    managers, a dict's key and value managers among them (`._modules['0']` of a Sequential),
    plus the root's epilogue lambda guards; 2.13 and 2.14): what one full check evaluates.
    torch's compilation_metrics "guard_count" counts the Python-side guards before they become
    leaves, a smaller number. None when the tree cannot be read."""

    def leaves(manager: Any, depth: int = 0) -> int:
        if depth > 10_000:
            return 0
        children = list(manager.get_child_managers())
        pairs = getattr(manager, "get_key_value_managers", None)  # a DictGuardManager's entries
        if pairs is not None:
            children += [m for pair in pairs().values() for m in pair if m is not None]
        return len(manager.get_leaf_guards()) + sum(leaves(child, depth + 1) for child in children)

    try:
        root = entry.guard_manager.root
        epilogue = root.get_epilogue_lambda_guards() if hasattr(root, "get_epilogue_lambda_guards") else []
        return leaves(root) + len(epilogue)
    except Exception:  # noqa: BLE001 - a tree that moved between releases: no count, not a failed run
        return None


def guard_check(entry: Any) -> Callable[[dict[str, Any]], bool]:
    """The entry's guard evaluation as a callable on the frame's locals: what a call runs before
    it may use the entry (without the C++ frame-evaluation around it)."""
    return entry.guard_manager.check


# --- the guard what-if (issue 21) --------------------------------------------------------------

#: The guard filters torch.compiler ships (the same six on 2.13 and 2.14), each a
#: `guard_filter_fn` for torch.compile(options=...): `fn(entries) -> [keep?]`.
GUARD_FILTERS = (
    "skip_guard_on_inbuilt_nn_modules_unsafe",
    "skip_guard_on_all_nn_modules_unsafe",
    "skip_guard_on_globals_unsafe",
    "keep_portable_guards_unsafe",
    "keep_tensor_guards_unsafe",
    "skip_all_guards_unsafe",
)


def guard_filter(name: str) -> Callable[[list[Any]], list[bool]] | None:
    """torch.compiler's filter of that name, None where this torch has none."""
    fn = getattr(torch.compiler, name, None)
    return fn if callable(fn) else None


def filter_entry_fields(entry: Any) -> tuple[str, str, bool]:
    """A GuardFilterEntry (torch._dynamo.types, 2.13 and 2.14) as (source name, guard type,
    global?): `self.gain_0`, `fn._modules['0']`, `G['torch']`; "" for torch's global state."""
    return (
        str(getattr(entry, "name", "") or ""),
        str(getattr(entry, "guard_type", "") or ""),
        bool(getattr(entry, "is_global", False)),
    )


def skip_guard_eval(stance: str) -> Any:
    """torch.compiler.set_stance(stance, skip_guard_eval_unsafe=True) as a context manager: only
    the guards that tell the cache entries apart are checked (with one entry, none)."""
    return torch.compiler.set_stance(stance, skip_guard_eval_unsafe=True)


# --- the kernels profile (issue 21) -------------------------------------------------------------

#: Inductor options for the kernels profile (2.13 and 2.14; dotted keys accepted in options):
#: each C++ kernel opens a profiler record named `graph_<id>_<kernel>`, and the trace carries,
#: per output module, which FX nodes each kernel holds and their user stacks. Both are part of
#: the FX-graph cache key and change the output code, so only a run that asks has them.
KERNEL_PROFILE_OPTIONS: dict[str, Any] = {"cpp.enable_kernel_profile": True, "trace.provenance_tracking_level": 1}

#: Profiler event names (torch.profiler, CPU activity; the same on 2.13 and 2.14).
EVENT_REGION = "Torch-Compiled Region"
EVENT_LOOKUP = "TorchDynamo Cache Lookup"
EVENT_CALL_GRAPH = "## Call CompiledFxGraph"


def profiled(fn: Callable[[], None], calls: int, device: str, marker: str) -> list[Any]:
    """`fn` called `calls` times under torch's profiler, each call inside a record named
    `marker`; the profiler's events (FunctionEvent: name, time_range, cpu_parent)."""
    from torch.profiler import ProfilerActivity, profile, record_function

    activities = [ProfilerActivity.CPU]
    if device.startswith("cuda") and torch.cuda.is_available():
        activities.append(ProfilerActivity.CUDA)
    with profile(activities=activities) as prof:
        for _ in range(calls):
            with record_function(marker):
                fn()
            if device.startswith("cuda"):
                torch.cuda.synchronize()
    return list(prof.events())
