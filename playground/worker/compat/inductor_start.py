"""Inductor's one-time start-up in a process, done once in a process that forks many that compile
(a bisection's driver), without running an op there: the modules a first compile imports, and
the C++ compiler's vector-ISA probes.

A fork inherits both. Without them each forked step did them again: the probes (a dry compile
of a small program per ISA, then a fresh `python` that loads it) are cached per process, and
with Inductor's caches off (code that registers its own decompositions, decomp_table.py) every
compile gets a fresh cache folder, so the dry compiles ran again too (measured, torch 2.13 on
2 loaded cores: an Inductor step of the decomposition lesson 15-16 s before, 4-5 s after).

No op runs here (a parent that ran a parallel op hands its children a broken OpenMP pool), and
nothing here reads Inductor's decomposition table into a cache: a step's snippet registers its
own after the fork. The modules are imported before the snippet, as in the playground's warm
worker (whose warm-up compiles); in a plain script they would be imported at its first compile,
after its registrations.
"""

from __future__ import annotations

import importlib
from typing import Any

#: What a first Inductor compile imports, by the modules that pull the rest in (about 1,400
#: modules on torch 2.13, 4 s of a loaded machine, that each step's compile imported again).
COMPILE_MODULES = (
    "torch._functorch.aot_autograd",
    "torch._inductor.compile_fx",
    "torch._inductor.codegen.cpp",
    "torch._inductor.codegen.cpp_wrapper_cpu",
    "torch._inductor.fx_passes.joint_graph",
    "torch._inductor.fx_passes.post_grad",
    "torch._inductor.fx_passes.pre_grad",
)

#: The C++ config the probes ran under: a step whose snippet sets another forgets their answers.
_PROBED_UNDER: dict[str, Any] = {}


def _cpp_probe_config() -> dict[str, Any]:
    import torch._inductor.config as inductor_config

    return {name: getattr(inductor_config.cpp, name, None) for name in ("cxx", "vec_isa_ok")}


def start_inductor() -> None:
    """Import what a first compile imports and run the vector-ISA probes, here; whatever of it
    fails is left to each compile, as before (it only costs time)."""
    for name in COMPILE_MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - a module this torch lacks: the compile imports its own
            pass
    try:
        from torch._inductor import cpu_vec_isa

        cpu_vec_isa.pick_vec_isa()
        for isa in cpu_vec_isa.valid_vec_isa_list():
            # The ISA's own extra probes (avx512's bf16, amx's fp16), asked during codegen.
            for attr in dir(type(isa)):
                if attr.startswith("is_") and attr.endswith("_supported"):
                    getattr(isa, attr)()
        _PROBED_UNDER.update(_cpp_probe_config())
    except Exception:  # noqa: BLE001 - the compile probes for itself
        _PROBED_UNDER.clear()


def forget_probes_if_config_changed() -> None:
    """After a step's config is applied: when it names another C++ compiler or forces the ISA
    check, the inherited probe answers are dropped, so the compile probes as a fresh process would."""
    if not _PROBED_UNDER or _cpp_probe_config() == _PROBED_UNDER:
        return
    try:
        from torch._inductor import cpu_vec_isa

        for value in vars(cpu_vec_isa).values():
            holders = [value, *vars(value).values()] if isinstance(value, type) else [value]
            for holder in holders:
                if callable(getattr(holder, "cache_clear", None)):
                    holder.cache_clear()
    except Exception:  # noqa: BLE001 - nothing was cached to drop
        pass
    _PROBED_UNDER.clear()
