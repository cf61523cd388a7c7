"""A compiled callable's cache entries: which code object holds them, the frame locals their
guards read, and which entry accepts a call."""

from __future__ import annotations

from functools import cache
from typing import Any

import torch
import torch._dynamo


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


def frame_locals(target: Any, args: tuple[Any, ...], kwargs: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """The names the compiled frame sees on entry (what guards call L['name']), or None when
    the signature cannot bind these arguments."""
    import inspect

    kwargs = kwargs or {}
    try:
        if isinstance(target, torch.nn.Module):
            return dict(inspect.signature(type(target).forward).bind(target, *args, **kwargs).arguments)
        return dict(inspect.signature(target).bind(*args, **kwargs).arguments)
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
