"""What each compile made: nodes, kernels, caches, config (extension fields; the worker's capture/
builds them)."""

from __future__ import annotations

from dataclasses import dataclass

from playground.engine.report.wire import Wire, wire


@dataclass(frozen=True)
class ConfigSetting(Wire):
    """One torch config value that differs from torch's default when a graph was compiled:
    `module` "dynamo", "inductor" or "functorch"; values as Python writes them (repr)."""

    module: str = ""
    name: str = ""
    value: str = ""
    default: str = ""


@dataclass(frozen=True)
class CompiledModule(Wire):
    """One module Inductor wrote for a graph (the forward, and the backward when there is one):
    its post-grad ATen nodes, its kernels (C++ or Triton, in the order the module defines them),
    the library kernels it calls (`mm`, `addmm`... and ATen fallbacks), and what the FX-graph
    cache did ("hit", "miss", "bypass"; "" when it logged nothing: cache off)."""

    pass_: str = wire("forward", key="pass")
    post_grad_nodes: int | None = None
    kernels: tuple[str, ...] = ()
    extern_kernels: tuple[str, ...] = ()
    fx_graph_cache: str = ""
    fx_graph_key: str = ""


@dataclass(frozen=True)
class GraphAnatomy(Wire):
    """One graph's compile: `fx_nodes` counts every node of the graph Dynamo handed the backend
    (placeholders and output included), `ops` its operations; `ir_nodes` Inductor's IR nodes for
    the frame; `aot_autograd_cache` "hit", "miss", "bypass" or ""; `config` what differed from
    torch's defaults for the run's compiles (read once, as torch.compile is called: the run's
    settings, the snippet's module-level changes and the backend's mode and options in place)."""

    graph: int = 0
    compile_id: str = ""
    fx_nodes: int = 0
    ops: int = 0
    ir_nodes: int | None = None
    aot_autograd_cache: str = ""
    modules: tuple[CompiledModule, ...] = ()
    config: tuple[ConfigSetting, ...] = ()
