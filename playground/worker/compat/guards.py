"""A cache entry's guards: their count, their check, torch.compiler's guard filters and the
stance that skips guard evaluation."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch._dynamo


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
