"""Dynamo's funcname_cache (torch/_dynamo/funcname_cache.py, private; torch 2.13 and 2.14): the
function name on each line of every source file a trace meets, tokenized once per process and
never checked against the file's time. The template fills it ahead for the next run
(process/trace_warmup.py) by calling torch's own function."""

from __future__ import annotations

import sys
from typing import Any


def funcname_cache() -> dict[str, Any] | None:
    """The cache (file -> {line: name}) when this torch has it and Dynamo is imported, else None."""
    module = sys.modules.get("torch._dynamo.funcname_cache")
    cache = getattr(module, "cache", None)
    return cache if isinstance(cache, dict) else None


def tokenize_file(file: str) -> bool:
    """`file` in the cache as a trace would put it there (torch's get_funcname); False when this
    torch has no such function."""
    module = sys.modules.get("torch._dynamo.funcname_cache")
    get_funcname = getattr(module, "get_funcname", None)
    if get_funcname is None:
        return False
    get_funcname(file, 1)
    return True
