"""The headless commands as a script or CI would use them: real subprocesses."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from playground.engine.snippet import SnippetError, read_snippet
from playground.engine.snippet_settings import literal_settings

CONTRACT_KEYS = {
    "torch_version",
    "settings",
    "graph_count",
    "graph_breaks",
    "graph_break_count",
    "recompiles",
    "recompile_count",
    "recompile_limit_hit",
    "guards",
    "error",
    "equivalence",
    "timings",
    "logs",
}

BREAK = """
import torch

SETTINGS = {"backend": "eager"}

def fn(x):
    y = x * 2
    if y.sum() > 0:
        return y
    return -y

def inputs():
    return [torch.ones(3)]
"""


def cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "playground", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def test_check_json_follows_the_contract(snippet):
    path = snippet(BREAK)
    result = cli("check", path, "--json", "--min-run-time", "0.02")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert CONTRACT_KEYS <= set(report)
    assert report["settings"] == {
        "fullgraph": False,
        "dynamic": None,
        "backend": "eager",
        "mode": None,
        "device": "cpu",
        "cold": False,
        # Torch's own switches, at their defaults.
        "config": {},
        "stance": "default",
        "error_on_graph_break": False,
        # Which of model and fn runs when both exist: None is the contract's rule (model).
        "target": None,
    }
    assert report["graph_break_count"] == 1
    assert set(report["graph_breaks"][0]) >= {"reason", "hint", "file", "line", "count"}
    assert set(report["equivalence"]) >= {"ok", "outputs", "grads"}
    assert set(report["timings"]) >= {"compile_s", "eager_ms", "compiled_ms", "speedup", "device"}
    assert set(report["logs"]) == {"graph_breaks", "recompiles", "guards"}
    assert report["content_sha256"] == hashlib.sha256(Path(path).read_bytes()).hexdigest()


def test_check_flags_override_snippet_settings_and_fail_on_break(snippet):
    path = snippet(BREAK)
    refused = cli("check", path, "--json", "--fullgraph", "--no-timing")
    assert refused.returncode == 0  # a fullgraph refusal is a finding, not a failure
    assert json.loads(refused.stdout)["error"]["kind"] == "compile"
    broke = cli("check", path, "--json", "--fail-on-break", "--no-timing", "--dynamic", "false")
    assert broke.returncode == 1
    assert json.loads(broke.stdout)["settings"]["dynamic"] is False


def test_check_text_report_and_snippet_error_exit_2(snippet):
    # eager: the text report and the exit codes are the subject, not Inductor's start-up (30 s).
    ok = cli("check", snippet(BREAK), "--no-timing", "--backend", "eager")
    assert ok.returncode == 0
    # The resume function after the break only returns y: an empty graph never reaches the backend.
    assert "graphs 1  breaks 1  recompiles 0  equiv ok" in ok.stdout
    assert "Data-dependent branching" in ok.stdout
    bad = cli("check", snippet("def fn(:\n", "bad.py"), "--json")
    assert bad.returncode == 2
    assert json.loads(bad.stdout)["error"]["kind"] == "snippet"
    assert bad.stderr.strip().count("\n") == 0 and "line 1" in bad.stderr


def test_check_runs_several_snippets_in_turn_and_exits_with_the_worst_code(snippet):
    fine = snippet(BREAK.replace("if y.sum() > 0:\n        return y\n    return -y", "return y"), "fine.py")
    broke = snippet(BREAK, "broke.py")
    result = cli("check", fine, broke, "--no-timing", "--fail-on-break")
    assert result.returncode == 1, result.stderr
    first, second = result.stdout.split("\n\nbroke.py  ")  # each report in turn, a blank line apart
    assert first.startswith("fine.py  ") and "graphs 1  breaks 0" in first
    assert "graphs 1  breaks 1" in second and result.stderr == ""
    # An export names one file for one report: refused before any worker starts.
    refused = cli("check", fine, broke, "--markdown", str(Path(fine).with_suffix(".md")), "--trace", "t")
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.strip() == "compile-playground check: --trace and --markdown FILE take one snippet (2 given)"
    assert not Path(fine).with_suffix(".md").exists()


def test_check_cuda_without_cuda_is_clear(snippet):
    result = cli("check", snippet(BREAK), "--json", "--device", "cuda")
    report = json.loads(result.stdout)
    if report["error"] is None:
        pytest.skip("CUDA is available here")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "cuda" in result.stderr


def _lines(proc_out: Path) -> list[dict]:
    out = []
    for line in proc_out.read_text().splitlines():
        if line.strip():
            out.append(json.loads(line))
    return out


def _wait_for(pred, timeout: float) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.1)
    return False


def test_watch_prints_diagnostics_then_complete_for_every_save(tmp_path, snippet):
    path = Path(snippet(BREAK))
    out = tmp_path / "out.jsonl"
    with open(out, "w") as fh:
        proc = subprocess.Popen(
            [sys.executable, "-m", "playground", "watch", str(path), "--json-lines", "--no-timing"],
            stdout=fh,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
        )
    try:
        assert _wait_for(lambda: len(_lines(out)) >= 2, 60), proc.stderr
        fixed = BREAK.replace(
            "if y.sum() > 0:\n        return y\n    return -y", "return torch.where(y.sum() > 0, y, -y)"
        )
        # an atomic save, as vim and VS Code do it
        tmp = path.with_suffix(".tmp")
        tmp.write_text(fixed.lstrip("\n"))
        os.replace(tmp, path)
        final_sha = hashlib.sha256(path.read_bytes()).hexdigest()
        assert _wait_for(
            lambda: any(line["content_sha256"] == final_sha and line["stage"] == "complete" for line in _lines(out)), 60
        )
    finally:
        proc.terminate()
        proc.wait(10)
    lines = _lines(out)
    assert [line["stage"] for line in lines[:2]] == ["diagnostics", "complete"]
    assert lines[0]["equivalence"] is None and lines[1]["equivalence"]["ok"]
    assert lines[1]["graph_break_count"] == 1
    last = lines[-1]
    assert last["content_sha256"] == final_sha and last["graph_break_count"] == 0
    assert list(last)[:2] == ["stage", "content_sha256"]


def test_read_snippet_errors(tmp_path, monkeypatch):
    p = tmp_path / "s.py"
    p.write_text("x = 1\n")
    assert read_snippet(p).sha256 == hashlib.sha256(b"x = 1\n").hexdigest()

    def deny(path):
        raise PermissionError(13, "Permission denied")

    # Root reads any file whatever its mode, so the refusal is simulated.
    monkeypatch.setattr("playground.engine.snippet.read_regular_bytes", deny)
    with pytest.raises(SnippetError) as info:
        read_snippet(p)
    assert info.value.error.type == "PermissionError"


def test_literal_settings():
    assert literal_settings('SETTINGS = {"fullgraph": True, "dynamic": None}\n') == {"fullgraph": True, "dynamic": None}
    assert literal_settings("SETTINGS = dict(a=1)\n") == {}
    assert literal_settings("def broken(:\n") == {}
