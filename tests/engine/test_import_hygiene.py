"""The client side of the engine never imports torch, textual or rich (STYLE.md)."""

from __future__ import annotations

import subprocess
import sys

CLIENT_MODULES = [
    "playground",
    "playground.cli",
    "playground.client",
    "playground.history",
    "playground.matrix",
    "playground.exports",
    "playground.report",
    "playground.settings",
    "playground.snippet",
    "playground.sync",
    "playground.textreport",
    "playground.textsafe",
    "playground.watch",
    "playground.watchcmd",
]


def test_client_side_is_torch_and_ui_free():
    code = (
        "import importlib, sys\n"
        f"for m in {CLIENT_MODULES!r}: importlib.import_module(m)\n"
        "bad = sorted(m for m in ('torch', 'textual', 'rich') if m in sys.modules)\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"client modules imported: {out.stdout.strip()}"
