"""Where Dynamo is tracing, read from another thread off its translator's frames."""

from __future__ import annotations

from typing import Any

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
