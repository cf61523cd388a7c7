"""The client side of the engine never imports torch, textual or rich (STYLE.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: Every module of the torch-free packages, found on disk rather than listed by hand, so that a
#: new module is covered the day it is added.
CLIENT_MODULES = ["playground"] + sorted(
    ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
    for package in ("playground/engine", "playground/cli")
    for path in (ROOT / package).glob("*.py")
    if path.name != "__main__.py"
)


def test_client_side_is_torch_and_ui_free():
    code = (
        "import importlib, sys\n"
        f"for m in {CLIENT_MODULES!r}: importlib.import_module(m)\n"
        "bad = sorted(m for m in ('torch', 'textual', 'rich') if m in sys.modules)\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"client modules imported: {out.stdout.strip()}"
