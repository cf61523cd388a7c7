"""compile-playground: a terminal playground for torch.compile.

Three packages, one per side of the process boundary (docs/architecture.md):
- `playground.worker`: the torch side, the worker process and everything it runs; the only
  code that imports torch.
- `playground.engine`: the torch-free engine API the front ends use (client, typed report,
  settings, history, matrix, exports).
- `playground.cli`: the command-line front ends; `tui` is the app.
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
