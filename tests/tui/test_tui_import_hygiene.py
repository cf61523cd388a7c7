"""The UI process never imports torch: only the worker process does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_no_tui_module_imports_torch():
    code = """
import importlib, pkgutil, sys
import tui
names = [m.name for m in pkgutil.walk_packages(tui.__path__, "tui.")]
for name in names:
    importlib.import_module(name)
import playground.engine.client, playground.engine.watch  # what the app loads to run and watch
assert "tui.app" in sys.modules and len(names) > 20, names
bad = sorted(m for m in sys.modules if m == "torch" or m.startswith("torch."))
print("torch modules:", bad)
sys.exit(1 if bad else 0)
"""
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
