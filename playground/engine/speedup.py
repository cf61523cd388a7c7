"""The speedup in one word for `playground/engine/history.py`, its one importer outside the
views; the words themselves live in `playground.engine.wording.timings`."""

from __future__ import annotations

from playground.engine.wording.timings import speedup_word

__all__ = ["speedup_word"]
