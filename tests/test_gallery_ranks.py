"""The gallery's lessons across ranks (snippets/ranks/: snippets whose SETTINGS ask for
`"ranks": N`) prove their claims on the installed torch.

For each lesson, the playground's `check --json` is compared with what torch itself says of the
same snippet on N processes joined by torch.distributed (tests/ranks_truth.py: a counting
backend per rank, torch's compile ids and its graph_breaks log records, eager against compiled
in the same process): per rank, graphs, breaks, recompiles and whether eager and compiled
agree. Each lesson's EXPECTED says what a reader is promised (the top level is rank 0's, as the
contract says; `ranks` per rank; `divergence` the facts that differ), and its header says the
same. Each lesson also runs as torch runs it, under torchrun. The test process stays
torch-free.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.test_gallery import HEADER_LINE, _module_literal

ROOT = Path(__file__).resolve().parents[1]
LESSONS = sorted(p for p in (ROOT / "snippets" / "ranks").glob("*.py") if not p.name.startswith("_"))
TIMEOUT_S = 600
COUNTS = ("graph_count", "graph_break_count", "recompile_count")


def _world(path: Path) -> int:
    return int(_module_literal(path, "SETTINGS")["ranks"])


def _config_flags(config: dict[str, Any]) -> list[str]:
    return [f"{key}={json.dumps(value)}" for key, value in config.items()]


#: A VARIANT's settings as check's flags.
_FLAGS = {"dynamic": lambda v: ["--dynamic", {None: "auto", True: "true", False: "false"}[v]]}


def _check(path: Path, config: dict[str, Any] | None = None, settings: dict[str, Any] | None = None) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "playground", "check", str(path), "--json", "--no-timing"]
    cmd += [a for c in _config_flags(config or {}) for a in ("--config", c)]
    cmd += [a for key, value in (settings or {}).items() for a in _FLAGS[key](value)]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, cwd=ROOT)
    assert done.stdout.strip(), done.stderr[-3000:]
    return json.loads(done.stdout)


def _truth(
    path: Path, config: dict[str, Any] | None = None, settings: dict[str, Any] | None = None
) -> list[dict[str, Any]]:
    cmd = [sys.executable, str(ROOT / "tests" / "ranks_truth.py")]
    both = {**(config or {}), **{f"settings.{k}": v for k, v in (settings or {}).items()}}
    cmd += [a for c in _config_flags(both) for a in ("--config", c)]
    cmd += [str(path), str(_world(path))]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_gallery_has_lessons_across_ranks() -> None:
    assert len(LESSONS) >= 3
    for path in LESSONS:
        assert _world(path) >= 2, path.name


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_a_lesson_across_ranks_reports_what_torch_compiled_on_each_rank(path: Path) -> None:
    expected = _module_literal(path, "EXPECTED")
    report = _check(path)
    truth = _truth(path)
    assert report["world_size"] == _world(path) == len(truth)
    ours = [{k: rank[k] for k in COUNTS} for rank in report["ranks"]]
    theirs = [{k: rank[k] for k in COUNTS} for rank in truth]
    assert ours == theirs, f"{path.name}: the playground {ours}, torch {theirs}"
    assert ours == expected["ranks"], f"{path.name}: EXPECTED says {expected['ranks']}"
    for rank, (mine, torch_says) in enumerate(zip(report["ranks"], truth, strict=True)):
        assert (mine["error"] is None) == (expected["error"] is None), (rank, mine["error"])
        ok = mine["equivalence"]["ok"]
        assert ok == torch_says["equivalence_ok"] == expected["equivalence_ok"], (rank, mine["equivalence"])
    for key in (*COUNTS, "recompile_limit_hit"):
        assert report[key] == expected[key], (key, report[key])
    assert sorted(d["what"] for d in report["divergence"]) == sorted(expected["divergence"])


def _variants() -> list[Any]:
    return [
        pytest.param(path, variant, id=f"{path.stem}-{i}")
        for path in LESSONS
        for i, variant in enumerate(_module_literal(path, "VARIANTS") or [])
    ]


@pytest.mark.parametrize(("path", "variant"), _variants())
def test_a_lessons_variant_is_what_torch_compiles_under_those_settings(path: Path, variant: dict[str, Any]) -> None:
    report = _check(path, variant.get("config"), variant.get("settings"))
    truth = _truth(path, variant.get("config"), variant.get("settings"))
    ours = [{k: rank[k] for k in COUNTS} for rank in report["ranks"]]
    theirs = [{k: rank[k] for k in COUNTS} for rank in truth]
    assert ours == theirs == variant["ranks"], (ours, theirs)


def test_ddps_bucket_splits_are_told_apart_from_graph_breaks() -> None:
    report = _check(ROOT / "snippets" / "ranks" / "ddp_buckets.py")
    for rank in report["ranks"]:
        ids = {g["compile_id"] for g in rank["graphs"]}
        assert len(ids) == 1 and len(rank["graphs"]) == 4
        assert rank["ddp_buckets"] == {"bucket_mb": 1.0, "splits": {ids.pop(): 4}}
    plain = _check(ROOT / "snippets" / "ranks" / "ddp_buckets.py", {"dynamo.optimize_ddp": False})
    assert plain["ddp_buckets"] == {"bucket_mb": 1.0, "splits": {}}
    other = _check(ROOT / "snippets" / "ranks" / "fsdp2.py")
    assert "ddp_buckets" not in other and all("ddp_buckets" not in r for r in other["ranks"])


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_a_lessons_header_says_what_expected_says(path: Path) -> None:
    expected = _module_literal(path, "EXPECTED")
    found = HEADER_LINE.search(ast.get_docstring(ast.parse(path.read_text())) or "")
    assert found, f"{path.name}: no 'Expected (...)' line"
    said = {
        "graph_count": int(found["graphs"]),
        "graph_break_count": int(found["breaks"]),
        "recompile_count": int(found["recompiles"]),
        "recompile_limit_hit": found["limit"] == "yes",
    }
    assert said == {k: expected[k] for k in said}
    assert f"torchrun --nproc-per-node {_world(path)} snippets/ranks/{path.name}" in path.read_text()


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.stem)
def test_a_lesson_runs_under_torchrun(path: Path) -> None:
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc-per-node={_world(path)}"]
    done = subprocess.run([*cmd, str(path)], capture_output=True, text=True, timeout=TIMEOUT_S, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    assert all(f"rank {r}" in done.stdout for r in range(_world(path))), done.stdout
