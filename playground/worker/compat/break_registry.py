"""torch's graph-break registry (the JSON inside the wheel) and its hint categories."""

from __future__ import annotations

import json
import os
import re
from functools import cache
from typing import Any

import torch
import torch._dynamo


@cache
def graph_break_registry() -> dict[str, dict[str, Any]]:
    """GB id -> {gb_type, explanation, hints}, from the JSON that ships inside the wheel, so
    hints work offline."""
    path = os.path.join(os.path.dirname(torch._dynamo.__file__), "graph_break_registry.json")
    try:
        with open(path, encoding="utf-8") as fh:
            raw = json.load(fh)
    except (OSError, ValueError):
        return {}
    out: dict[str, dict[str, Any]] = {}
    for gb_id, entries in raw.items():
        entry = entries[0] if isinstance(entries, list) and entries else entries
        if not isinstance(entry, dict):
            continue
        out[gb_id.upper()] = {
            "gb_type": entry.get("Gb_type", ""),
            "explanation": _clean_registry_text(entry.get("Explanation", "")),
            "hints": _join_hint_fragments(entry.get("Hints") or []),
        }
    return out


def _clean_registry_text(text: str) -> str:
    """The registry stores explanations as source text ("a " "b" + var): keep the words."""
    text = re.sub(r'"\s*"', "", text or "")
    text = re.sub(r"\s*\+\s*\w+$", "", text).strip().strip('"').strip()
    return re.sub(r"\s+", " ", text)


def _join_hint_fragments(hints: list[str]) -> list[str]:
    """Hints split across string literals ("Set x " "or y ") become one hint each."""
    out: list[str] = []
    pending = ""
    for hint in hints:
        pending += hint
        if not hint.endswith(" "):
            out.append(_clean_registry_text(pending))
            pending = ""
    if pending.strip():
        out.append(_clean_registry_text(pending))
    return out


@cache
def graph_break_ids_by_type() -> dict[str, str]:
    return {v["gb_type"]: k for k, v in graph_break_registry().items() if v["gb_type"]}


@cache
def graph_break_hint_categories() -> dict[str, frozenset[str]]:
    """torch's hint categories (torch._dynamo.graph_break_hints, the same eight on 2.13 and 2.14:
    USER_ERROR, DYNAMO_BUG, DIFFICULT, FUNDAMENTAL, SUPPORTABLE, CAUSED_BY_EARLIER_GRAPH_BREAK,
    INFERENCE_MODE, SPARSE_TENSOR), each as the set of its full hint strings: a break's hints are
    `[*graph_break_hints.X, "specific hint", ...]`, so a hint equal to one of them names the category."""
    try:
        import torch._dynamo.graph_break_hints as hints
    except ImportError:  # pragma: no cover - a torch without the registry
        return {}
    out = {}
    for name in dir(hints):
        value = getattr(hints, name)
        if name.isupper() and isinstance(value, (list, tuple)):
            out[name] = frozenset(str(text).strip() for text in value)
    return out
