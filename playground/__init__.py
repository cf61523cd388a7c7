"""compile-playground's engine: snippet loading, the warm torch worker and its client, the
capture of torch's own diagnostics, equivalence, timings and the headless commands.

Only `playground.worker` (and the modules it imports: compat, capture, runner, equivalence,
timing) import torch; everything the CLI and the app use directly is torch-free.
"""

from __future__ import annotations

from pathlib import Path

__version__ = "0.1.0"


def snippets_dir() -> Path:
    """The bundled gallery (shipped beside the package)."""
    return Path(__file__).resolve().parents[1] / "snippets"


def default_snippet() -> Path:
    return snippets_dir() / "default.py"
