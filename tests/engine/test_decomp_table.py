"""Inductor's decomposition table as code leaves it (worker/run/spine/decomp_table.py), through real
`check` and `bisect` processes:

- torch's compile caches do not key on the table: in plain processes sharing a cache folder, a
  graph compiled under a wrong decomposition is served to code without it (the truth, computed
  here on the installed torch); the playground's runs of such code leave nothing to serve, and
  are never served a graph compiled under another table;
- `playground.without_decompositions`, the workaround bisection names for the decomposition
  lesson (the op torch's own bisector names), turns its FAIL into a pass, in `check` and in a
  bisection run with it; a name that is no op is a settings error.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.engine.test_bisect import _bisect as bisected
from tests.engine.test_bisect import _truth, lesson_bisection

ROOT = Path(__file__).resolve().parents[2]
LESSON = ROOT / "snippets" / "bisect" / "wrong_decomposition.py"
KEY = "playground.without_decompositions"

#: The lesson's graph with and without its wrong registration: the same Dynamo graph.
BAD = LESSON.read_text()
GOOD = BAD.replace("decompositions[torch.ops.aten.sin.default] = _bad_sin", "")

#: A plain process: the lesson's fn compiled with Inductor, compared with eager by allclose.
#: Seeded: its `sin(x) + 1` near x = -pi/2 is near 0, where allclose's default tolerance is
#: below one float32 ulp of sin, so an unseeded input failed now and then on code torch compiles
#: right.
PLAIN = textwrap.dedent(
    """
    import json, runpy, sys, torch
    torch.manual_seed(0)
    m = runpy.run_path(sys.argv[1])
    x = next(iter(m["inputs"]()))[0]
    print(json.dumps(bool(torch.allclose(m["fn"](x), torch.compile(m["fn"], backend="inductor")(x)))))
    """
)


def _env(cache: Path) -> dict[str, str]:
    return {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(cache)}


def _plain(path: Path, cache: Path) -> bool:
    out = subprocess.run(
        [sys.executable, "-c", PLAIN, str(path)], capture_output=True, text=True, timeout=600, env=_env(cache)
    )
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _check(path: Path, cache: Path, *flags: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "playground.cli.main", "check", str(path), "--json", "--no-timing", *flags],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env=_env(cache),
    )
    assert out.returncode in (0, 2), out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _bisect(path: Path, cache: Path, *flags: str) -> dict:
    return bisected(path, *flags, env=_env(cache))


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    bad, good = tmp_path / "bad.py", tmp_path / "good.py"
    bad.write_text(BAD)
    good.write_text(GOOD)
    return bad, good


def test_torch_serves_a_graph_cached_under_another_table(tmp_path: Path, files: tuple[Path, Path]) -> None:
    """The truth the playground guards against: plain processes sharing a cache folder."""
    bad, good = files
    assert _plain(bad, tmp_path / "cache") is False
    served = _plain(good, tmp_path / "cache")
    fresh = _plain(good, tmp_path / "other")
    assert fresh is True
    if served is True:
        pytest.skip("this torch keys its caches on the decomposition table: nothing to guard against")


def test_runs_of_a_registering_snippet_leave_no_entry_and_take_none(tmp_path: Path, files: tuple[Path, Path]) -> None:
    bad, good = files
    cache = tmp_path / "cache"
    first = _check(bad, cache)
    assert first["equivalence"]["ok"] is False
    assert any("caches off" in note and "aten.sin.default" in note for note in first["notes"])
    # Code without the registration, after it, on the same cache: right, as a fresh cache gives.
    after = _check(good, cache)
    assert after["equivalence"]["ok"] is True
    assert not any("caches off" in note for note in after["notes"])
    # And the registering code after torch's right graph is cached: still its own wrong values.
    again = _check(bad, cache)
    assert again["equivalence"]["ok"] is False


def _truth_op() -> str:
    """The op torch's own bisector names for the lesson (test_bisect.py's truth)."""
    truth = _truth(LESSON)
    assert truth is not None and truth["subsystem"] == "decomposition"
    info = truth["debug_info"]
    op = info.split("op='", 1)[1].split("'", 1)[0]
    overload = info.split("overload='", 1)[1].split("'", 1)[0]
    return f"{op}.{overload}"


def test_decomposition_workaround_turns_the_fail_into_a_pass(tmp_path: Path) -> None:
    op = _truth_op()
    cache = tmp_path / "cache"
    # The lesson's bisection, shared with test_bisect.py's tests of it: a registering snippet's
    # steps compile with Inductor's caches off, whatever the cache folder.
    found = lesson_bisection(LESSON.stem)["bisection"]
    assert found["workaround"] == {"config": {KEY: [op]}}
    flag = f"--config={KEY}={json.dumps([op])}"
    applied = _check(LESSON, cache, flag)
    assert applied["error"] is None
    assert applied["equivalence"]["ok"] is True
    assert applied["settings"]["config"] == {KEY: [op]}
    assert any(op in note and "taken out" in note for note in applied["notes"])
    assert _bisect(LESSON, cache, flag)["bisection"] is None


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("aten.no_such_op", "has no op aten.no_such_op"),
        ("aten.sin.no_such_overload", "has no op aten.sin.no_such_overload"),
        ("aten", "is not an op name"),
        ("5", "takes an op name"),
        ('["aten.sin.default", 3]', "not 3"),
    ],
)
def test_a_name_that_is_no_op_is_a_settings_error(tmp_path: Path, value: str, says: str) -> None:
    report = _check(LESSON, tmp_path / "cache", f"--config={KEY}={value}", "--backend=eager")
    assert report["error"]["kind"] == "settings"
    assert says in report["error"]["message"]


def test_an_op_not_in_the_table_is_said(tmp_path: Path) -> None:
    report = _check(LESSON, tmp_path / "cache", f"--config={KEY}=aten.cos.default")
    assert report["error"] is None
    assert any("has no aten.cos.default" in note for note in report["notes"])
