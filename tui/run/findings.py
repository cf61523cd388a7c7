"""What a run's compile error means, for the app: the words every view shares
(playground/engine/wording/errors.py), read from the error's typed fields, which the worker
fills from torch's text. Nothing here reads torch's text."""

from __future__ import annotations

from playground.engine.wording.errors import missing_backend, refusal_words, refused_break

__all__ = ["missing_backend", "refusal_words", "refused_break"]
