"""The code Dynamo wrote, through depyf: its version and its dump around compiled calls."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


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


@contextmanager
def transformed_code_recorded(recorded: list[tuple[str, Any]]) -> Iterator[None]:
    """Every code object Dynamo writes while inside, appended to `recorded` as (the frame's
    name, its transformed code) in the order Dynamo compiled them, through torch's own bytecode
    hook (torch._dynamo.convert_frame.register_bytecode_hook, 2.13 and 2.14). Entered before
    depyf's: hooks run in the order they were registered, and depyf's hands Dynamo a code
    compiled back from its decompilation, so this one sees Dynamo's own. Where this torch has no
    such hook, nothing is recorded."""
    try:
        from torch._dynamo.convert_frame import register_bytecode_hook
    except ImportError:  # pragma: no cover - a torch without the hook
        yield
        return

    def hook(code: Any, new_code: Any) -> None:
        recorded.append((code.co_name, new_code))

    handle = register_bytecode_hook(hook)
    try:
        yield
    finally:
        handle.remove()
