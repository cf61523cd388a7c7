"""tests/golden.py's comparison: byte for byte but for the keys a change names as added, which
the base must not hold."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import golden  # noqa: E402


def _write(folder: Path, name: str, report: dict) -> None:
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(json.dumps(report, indent=1, sort_keys=True) + "\n", encoding="utf-8")


def test_drop_follows_objects_and_lists():
    report = {"error": {"type": "X", "refused": {}}, "recompiles": [{"failures": [1]}, {"reasons": []}]}
    assert golden.drop(report, "error.refused") == 1
    assert golden.drop(report, "recompiles[].failures") == 1
    assert golden.drop(report, "guard_details[].guards[].rank") == 0
    assert report == {"error": {"type": "X"}, "recompiles": [{}, {"reasons": []}]}


def test_only_the_added_keys_may_differ(tmp_path: Path):
    base, new = tmp_path / "base", tmp_path / "new"
    _write(base, "a.json", {"error": {"type": "X"}, "graph_count": 1})
    _write(new, "a.json", {"error": {"type": "X", "refused": {"line": 3}}, "graph_count": 1})
    assert golden.compare(base, new, ["error.refused"]) == []
    assert golden.compare(base, new, []) == ["a.json: differs beyond the added keys"]
    _write(new, "a.json", {"error": {"type": "Y", "refused": {"line": 3}}, "graph_count": 1})
    assert golden.compare(base, new, ["error.refused"]) == ["a.json: differs beyond the added keys"]
    # A key the base holds is no addition: naming it would hide a change.
    assert "the base already holds graph_count" in golden.compare(base, new, ["graph_count"])[0]
