"""Session-wide test settings."""

from __future__ import annotations

import os
from pathlib import Path

# Inductor's on-disk cache outlives processes and sessions: a file left truncated by an earlier
# crash on this machine would fail compiles here that have nothing to do with it. The tests get
# a cache of their own inside the checkout (workers inherit the environment).
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", str(Path(__file__).resolve().parents[1] / ".inductor-cache-tests"))
