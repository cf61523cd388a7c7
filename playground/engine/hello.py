"""The worker's handshake as a frozen value: what its torch is and can do, and what its start
cost. Torch-free.

The template (playground/worker/process/template.py) makes one once torch is imported and
warmed and sends it as its first message; the channel (playground/engine/channel.py) reads it
back once, and every reader (the client's failure reports, the app's backend cycle and
palette, the title bar, a workshop session's presenter.json) uses its fields. It reads with
the reports' codec: a key an older worker did not send takes its field's default.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from playground.engine.report import Wire, WireTypeError, strict_by_default


@dataclass(frozen=True)
class ConfigKey(Wire):
    """One of torch's config keys the palette can set: `dynamo.NAME` or `inductor.NAME`, its
    type as the worker names it ("bool", "int", "literal", "int|float"...), and its default."""

    name: str = ""
    type: str = ""
    default: Any = None


@dataclass(frozen=True)
class WorkerHello(Wire):
    """The template's greeting (its "hello" event, less the event's name)."""

    torch_version: str = ""
    cuda_available: bool = False
    #: Every backend the worker's torch registers (torch._dynamo.list_backends).
    backends: tuple[str, ...] = ()
    #: Every config key of this torch the palette can offer; empty from an older worker.
    config_keys: tuple[ConfigKey, ...] = ()
    pid: int = 0
    python: str = ""
    #: Seconds the template took to import torch, and to warm it (the warm-up run).
    import_s: float = 0.0
    warm_s: float = 0.0
    #: "fork" (a child per run) or "none" (runs in the template: for measuring only).
    isolation: str = ""
    #: Whether a child forked after the warm-up could run (no thread pool that forking breaks).
    fork_ok: bool = False
    threads: int = 0
    rss_mb: float = 0.0

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, *, strict: bool | None = None) -> WorkerHello:
        """The greeting in `data`; lenient reading (the default outside the tests) also passes
        over config keys that are not objects, as the palette always has."""
        if strict is None:
            strict = strict_by_default()
        if not isinstance(data, Mapping):
            if strict and data is not None:
                raise WireTypeError(f"WorkerHello: {type(data).__name__} is not an object")
            data = None
        elif not strict and isinstance(data.get("config_keys"), (list, tuple)):
            data = {**data, "config_keys": [k for k in data["config_keys"] if isinstance(k, Mapping)]}
        hello: WorkerHello = super().from_dict(data, strict=strict)
        return hello
