"""torch's config modules: the ones a run's settings patch, and every value not at its default."""

from __future__ import annotations

from typing import Any

#: The config modules a run's settings may patch, by the prefix of a settings key.
CONFIG_MODULES = {"dynamo": "torch._dynamo.config", "inductor": "torch._inductor.config"}


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
