"""compile-playground's engine: snippet loading, the warm torch worker and its client, the
capture of torch's own diagnostics, equivalence, timings and the headless commands.

Only `playground.worker` (and the modules it imports: compat, capture, runner, equivalence,
timing) import torch; everything the CLI and the app use directly is torch-free.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__version__ = "0.1.0"

#: The package that holds the gallery: the repository's top-level `snippets/` folder, mapped
#: onto this name by pyproject.toml so that it ships inside the wheel.
SNIPPETS_PACKAGE = "playground.snippets"


def snippets_dir() -> Path:
    """The bundled gallery, `default.py` included, as a real folder: the app copies from it
    and the worker runs its files by path."""
    try:
        root = resources.files(SNIPPETS_PACKAGE)
    except ModuleNotFoundError:
        # A checkout run without installing it (`python -m playground` from the repository).
        return Path(__file__).resolve().parents[1] / "snippets"
    if not isinstance(root, Path):
        # A zipped install: nothing on disk to copy or run.
        raise FileNotFoundError(f"the bundled snippets are not files on disk here: {root}")
    return root
