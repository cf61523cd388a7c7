"""The toggles of one experiment, as a frozen value shared by the CLI, the app and the worker.

Torch-free on purpose: the UI process builds and cycles these without importing torch.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

#: Backends always offered; the worker adds whatever torch._dynamo.list_backends() reports.
CORE_BACKENDS: tuple[str, ...] = ("eager", "aot_eager", "inductor")
#: Inductor modes, None meaning torch.compile's default.
MODES: tuple[str | None, ...] = (
    None,
    "reduce-overhead",
    "max-autotune",
    "max-autotune-no-cudagraphs",
)
#: dynamic=None is torch's "auto": static first, automatic dynamic after a shape change.
DYNAMICS: tuple[bool | None, ...] = (None, True, False)
DEVICES: tuple[str, ...] = ("cpu", "cuda")


def dynamic_name(value: bool | None) -> str:
    """The CLI spelling of a dynamic value: auto, true or false."""
    return "auto" if value is None else ("true" if value else "false")


def parse_dynamic(text: str | bool | None) -> bool | None:
    if text is None or isinstance(text, bool):
        return text
    lowered = text.strip().lower()
    if lowered in ("auto", "none", "null", ""):
        return None
    if lowered in ("true", "1", "yes", "on"):
        return True
    if lowered in ("false", "0", "no", "off"):
        return False
    raise ValueError(f"dynamic must be auto, true or false, not {text!r}")


@dataclass(frozen=True)
class Settings:
    """What torch.compile is called with, plus where and how the run is measured."""

    fullgraph: bool = False
    dynamic: bool | None = None
    backend: str = "inductor"
    mode: str | None = None
    device: str = "cpu"
    #: Disable Inductor's FX-graph and AOT-autograd caches, which survive dynamo.reset(),
    #: so that compile_s is a true cold compile.
    cold: bool = False

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> Settings:
        """Build from a dict (a snippet's SETTINGS or a report's settings); unknown keys ignored."""
        data = dict(data or {})
        base = cls()
        mode = data.get("mode", base.mode)
        return cls(
            fullgraph=bool(data.get("fullgraph", base.fullgraph)),
            dynamic=parse_dynamic(data.get("dynamic", base.dynamic)),
            backend=str(data.get("backend", base.backend) or base.backend),
            mode=None if mode in (None, "default", "") else str(mode),
            device=str(data.get("device", base.device) or base.device),
            cold=bool(data.get("cold", base.cold)),
        )

    def merged(self, overrides: dict[str, Any]) -> Settings:
        """These settings with the keys of `overrides` that are not None applied."""
        return replace(self, **{k: v for k, v in overrides.items() if v is not None})

    def label(self) -> str:
        """A short one-line description for headers and the history list."""
        parts = [
            f"fullgraph={'on' if self.fullgraph else 'off'}",
            f"dynamic={dynamic_name(self.dynamic)}",
            f"backend={self.backend}",
            f"mode={self.mode or 'default'}",
            f"device={self.device}",
        ]
        if self.cold:
            parts.append("cold")
        return "  ".join(parts)


def cycle(options: tuple[Any, ...] | list[Any], current: Any) -> Any:
    """The option after `current` in `options`, wrapping round; the first if absent."""
    options = list(options)
    try:
        return options[(options.index(current) + 1) % len(options)]
    except ValueError:
        return options[0]
