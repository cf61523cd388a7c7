"""What torch itself says a program compiled, per compiled callable: run as
`python tests/program_truth.py [--backend NAME] PROGRAM [ARGS...]`, in a fresh process, it
runs PROGRAM as `python PROGRAM ARGS` would, with every torch.compile call's backend behind a
counting backend (one per backend name, as equal backends are one to Dynamo), and prints one JSON object: per callable (in the order torch.compile was
called) its calls, the graphs its backend was handed, the recompiles among them (graphs
compiled under a compile id whose frame had compiled before) and the graph breaks torch logged
while it ran (the records of TORCH_LOGS=graph_breaks, counted, never parsed:
counters["graph_break"] misses a data-dependent branch's on 2.13); the totals over them.

Torch's own backend calls, compile ids and log records, not the playground's capture: tests/test_gallery_programs.py
compares the playground's report with this. `--backend` replaces every call's backend, as the
playground's toggle does.
"""

from __future__ import annotations

import functools
import json
import logging
import runpy
import sys
from typing import Any

import torch
from torch._dynamo.backends.registry import lookup_backend
from torch._guards import CompileContext


def main(argv: list[str]) -> None:
    backend_override = None
    if argv[:1] == ["--backend"]:
        backend_override, argv = argv[1], argv[2:]
    path, args = argv[0], argv[1:]
    sites: list[dict[str, Any]] = []
    stack: list[dict[str, Any]] = []
    original = torch.compile

    logged = [0]

    class Breaks(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.name.endswith(".__graph_breaks"):  # the artifact's loggers, one per module
                logged[0] += 1

    torch._logging.set_logs(graph_breaks=True)
    from torch._logging._internal import log_registry

    # set_logs gives each registered logger a stderr handler of its own, propagation off.
    for qname in log_registry.get_log_qnames():
        logging.getLogger(qname).handlers = [Breaks()]

    def breaks() -> int:
        return logged[0]

    def counted(site: dict[str, Any], fn: Any) -> Any:
        @functools.wraps(fn)
        def call(*a: Any, **kw: Any) -> Any:
            site["calls"] += 1
            if stack:  # the breaks so far belong to the callable it interrupts
                stack[-1]["graph_break_count"] += breaks() - stack[-1]["_mark"]
            stack.append(site)
            site["_mark"] = breaks()
            try:
                return fn(*a, **kw)
            finally:
                site["graph_break_count"] += breaks() - site["_mark"]
                stack.pop()
                if stack:
                    stack[-1]["_mark"] = breaks()

        return call

    backends: dict[str, Any] = {}

    def shared(name: str) -> Any:
        """One counting backend per backend name: Dynamo compares backends with ==, and a new
        one per torch.compile call would recompile what the program's own calls share (the
        graph counts in the callable whose call compiled it: the top of the stack)."""
        if name not in backends:
            real = lookup_backend(name)

            def backend(gm: Any, example_inputs: Any) -> Any:
                if stack:
                    stack[-1]["graph_count"] += 1
                    cid = CompileContext.current_compile_id()
                    if cid is not None and cid.frame_compile_id:
                        stack[-1]["recompile_count"] += 1
                return real(gm, example_inputs)

            backends[name] = backend
        return backends[name]

    def patched(model: Any = None, **kwargs: Any) -> Any:
        if model is None:
            return lambda fn: patched(fn, **kwargs)
        name = backend_override or kwargs.pop("backend", "inductor")
        kwargs.pop("backend", None)
        kwargs.pop("mode", None)
        kwargs.pop("options", None)
        site = {"name": _name(model), "calls": 0, "graph_count": 0, "recompile_count": 0, "graph_break_count": 0}
        sites.append(site)
        compiled = original(model, backend=shared(name), **kwargs)
        if isinstance(compiled, torch.nn.Module):
            compiled.forward = counted(site, compiled.__dict__["forward"])
            return compiled
        return counted(site, compiled)

    torch.compile = patched
    sys.argv = [path, *args]
    code = 0
    try:
        runpy.run_path(path, run_name="__main__")
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        torch.compile = original
    for site in sites:
        site.pop("_mark", None)
    totals = {k: sum(s[k] for s in sites) for k in ("graph_count", "graph_break_count", "recompile_count")}
    print(json.dumps({"torch": torch.__version__, "exit": code, "callables": sites, **totals}))


def _name(model: Any) -> str:
    if isinstance(model, torch.nn.Module):
        return type(model).__name__
    owner, func = getattr(model, "__self__", None), getattr(model, "__func__", None)
    if owner is not None and func is torch.nn.Module._call_impl:
        return type(owner).__name__
    if owner is not None and func is not None:
        return f"{type(owner).__name__}.{func.__name__}"
    return getattr(model, "__qualname__", type(model).__name__)


if __name__ == "__main__":
    main(sys.argv[1:])
