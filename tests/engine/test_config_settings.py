"""Torch's own switches as settings: config keys, the stance, error_on_graph_break.

The client checks their shape only (it is torch-free); the worker checks each key and type
against this torch's real config modules. On real workers, backend eager.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from playground.cli.flags import config_arg, overrides_of
from playground.cli.main import parse
from playground.engine.history import Entry, changes, settings_changes
from playground.engine.report import Report
from playground.engine.settings import COMMON_CONFIG, STANCES, Settings
from playground.engine.snippet_settings import resolve_settings, snippet_settings_error
from tests.engine.conftest import run

ITEM = """
import torch
{head}
def fn(x):
    n = x.sum().item()
    return x * n

def inputs():
    return [(torch.ones(4),)]
"""
CAPTURE = {"config": {"dynamo.capture_scalar_outputs": True}, "backend": "eager"}


def check_json(path: str, *flags: str) -> dict:
    """A fresh `compile-playground check --json`: its own process, nothing warm."""
    cmd = [sys.executable, "-m", "playground", "check", path, "--backend", "eager", "--no-timing", "--json", *flags]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    return json.loads(out.stdout)


# --- the value and its spellings (no torch) -------------------------------------------------


def test_switches_are_part_of_a_frozen_hashable_value():
    s = resolve_settings(f"SETTINGS = {CAPTURE!r}").settings
    assert s.config == (("dynamo.capture_scalar_outputs", True),)
    assert hash(s) == hash(Settings(backend="eager", config=(("dynamo.capture_scalar_outputs", True),)))
    assert "dynamo.capture_scalar_outputs=True" in s.label()
    data = s.to_dict()
    assert data["config"] == {"dynamo.capture_scalar_outputs": True} and data["stance"] == "default"
    assert Settings.from_dict(json.loads(json.dumps(data))) == s
    assert Settings().switch_words() == [] and "stance" not in Settings().label()


def test_long_spellings_fold_and_lists_freeze():
    text = "SETTINGS = {'config': {'torch._inductor.config.cpp.simdlen': 8, 'dynamo.x_list': [1, 2]}}"
    s = resolve_settings(text).settings
    assert s.config == (("dynamo.x_list", (1, 2)), ("inductor.cpp.simdlen", 8))
    assert s.to_dict()["config"]["dynamo.x_list"] == [1, 2]


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("SETTINGS = {'config': {'capture_scalar_outputs': True}}", ("config", "dynamo.<name>")),
        ("SETTINGS = {'config': {'dynamo.x': object}}", ("literal",)),
        ("SETTINGS = {'config': ['dynamo.x']}", ("config", "dict")),
        ("SETTINGS = {'stance': 'fail_on_recompiles'}", ("stance", "'fail_on_recompile'")),
        ("SETTINGS = {'error_on_graph_break': 'yes'}", ("error_on_graph_break", "True or False")),
    ],
)
def test_bad_switch_shapes_are_settings_errors_with_their_line(text: str, words: tuple[str, ...]):
    error = snippet_settings_error("x = 1\n" + text)
    assert error is not None and error["kind"] == "settings" and error["line"] == 2, error
    for word in words:
        assert word in error["message"], error["message"]


def test_command_line_flags_merge_into_the_snippets_config():
    args = parse(
        "check",
        ["s.py", "--config", "dynamo.recompile_limit=2", "--config", "inductor.max_autotune=true", "--stance",
         "fail_on_recompile", "--error-on-graph-break"],
    )  # fmt: skip
    overrides = overrides_of(args)
    resolved = resolve_settings(f"SETTINGS = {CAPTURE!r}", overrides)
    assert resolved.problems == ()
    s = resolved.settings
    assert dict(s.config) == {
        "dynamo.capture_scalar_outputs": True,
        "dynamo.recompile_limit": 2,
        "inductor.max_autotune": True,
    }
    assert s.stance == "fail_on_recompile" and s.error_on_graph_break
    assert "stance" not in overrides_of(parse("check", ["s.py"]))  # not given: not an override


@pytest.mark.parametrize(
    ("text", "value"),
    [("dynamo.a=true", True), ("dynamo.a=4", 4), ('dynamo.a="x"', "x"), ("dynamo.a=null", None),
     ("dynamo.a=False", False), ("dynamo.a=name", "name"), ("dynamo.a=[1,2]", (1, 2))],
)  # fmt: skip
def test_config_flag_values(text: str, value: object):
    assert config_arg(text) == ("dynamo.a", value)


@pytest.mark.parametrize("text", ["capture_scalar_outputs=true", "dynamo.a", "torch.x=1", "dynamo.a=NaN"])
def test_bad_config_flags_exit_2(text: str, capsys: pytest.CaptureFixture[str]):
    with pytest.raises(SystemExit) as exc:
        parse("check", ["s.py", "--config", text])
    assert exc.value.code == 2 and "--config" in capsys.readouterr().err


def test_history_label_and_diff_carry_the_switches():
    before = Report.from_dict({"settings": Settings(backend="eager").to_dict(), "graph_count": 2})
    after_settings = Settings(backend="eager", config=(("dynamo.capture_scalar_outputs", True),), stance="force_eager")
    after = Report.from_dict({"settings": after_settings.to_dict(), "graph_count": 1})
    assert "dynamo.capture_scalar_outputs=True" in Entry(2, after, "", 0.0).label()
    found = [str(c) for c in changes(before, after)]
    assert found[:2] == ["dynamo.capture_scalar_outputs unset -> True", "stance unset -> force_eager"]
    assert "graphs 2 -> 1" in found
    assert settings_changes(after_settings, after_settings) == []


# --- checked against torch itself -------------------------------------------------------------


def test_stances_and_common_keys_are_torchs():
    import re

    import torch
    import torch._dynamo.config as dynamo_config
    import torch._inductor.config as inductor_config

    # set_stance accepts any string up front; its docstring lists the stances it acts on.
    documented = re.findall(r'^\s*- "(\w+)":', torch.compiler.set_stance.__doc__ or "", re.M)
    assert set(documented) == set(STANCES), documented
    for stance in STANCES:
        with torch.compiler.set_stance(stance):
            pass
    modules = {"dynamo": dynamo_config, "inductor": inductor_config}
    from tui.keys.commands import config_catalog

    for entry in config_catalog(None):
        prefix, _, name = entry["name"].partition(".")
        default = modules[prefix]._config[name].default
        assert type(default).__name__ == entry["type"], entry
    assert len(config_catalog(None)) == len(COMMON_CONFIG)


# --- on real workers ------------------------------------------------------------------------


def test_capture_scalar_outputs_from_settings_and_flag_match_a_fresh_process(worker, snippet, tmp_path):
    plain = run(worker, snippet(ITEM.format(head="")))
    assert plain["graph_break_count"] == 1 and plain["error"] is None
    from_settings = run(
        worker,
        snippet(ITEM.format(head=f"SETTINGS = {CAPTURE!r}"), "s.py"),
        resolve_settings(f"SETTINGS = {CAPTURE!r}").settings,
    )
    by_hand = check_json(snippet(ITEM.format(head="torch._dynamo.config.capture_scalar_outputs = True"), "h.py"))
    by_flag = check_json(snippet(ITEM.format(head=""), "f.py"), "--config", "dynamo.capture_scalar_outputs=true")
    for report in (from_settings, by_hand, by_flag):
        assert report["error"] is None, report["error"]
        assert (report["graph_count"], report["graph_break_count"]) == (by_hand["graph_count"], 0)
    assert from_settings["settings"]["config"] == {"dynamo.capture_scalar_outputs": True}
    assert by_flag["settings"]["config"] == {"dynamo.capture_scalar_outputs": True}
    # The next run on the same warm worker without the key breaks again: nothing leaked.
    again = run(worker, snippet(ITEM.format(head=""), "again.py"))
    assert again["graph_break_count"] == 1


@pytest.mark.parametrize(
    ("config", "words"),
    [
        ((("dynamo.capture_scalr_outputs", True),), ("dynamo.capture_scalr_outputs", "did you mean")),
        ((("dynamo.recompile_limit", True),), ("dynamo.recompile_limit", "int")),
        ((("inductor.max_autotune", "yes"),), ("inductor.max_autotune", "bool")),
    ],
)
def test_a_key_or_type_torch_lacks_is_a_settings_error(worker, snippet, config, words):
    report = run(worker, snippet(ITEM.format(head="")), Settings(backend="eager", config=config))
    error = report["error"]
    assert error["kind"] == "settings" and report["graph_count"] == 0, error
    for word in words:
        assert word in error["message"], error["message"]


def test_stance_fail_on_recompile_raises_on_a_recompile(worker, snippet):
    path = snippet(
        """
        import torch

        def fn(x):
            return x * 2

        def inputs():
            return [(torch.ones(2),), (torch.ones(3),)]
        """
    )
    fine = run(worker, path, Settings(backend="eager", dynamic=False))
    assert fine["error"] is None and fine["recompile_count"] == 1
    report = run(worker, path, Settings(backend="eager", dynamic=False, stance="fail_on_recompile"))
    error = report["error"]
    assert error["kind"] == "compile" and "fail_on_recompile" in error["message"], error
    assert report["settings"]["stance"] == "fail_on_recompile"


def test_error_on_graph_break_raises_at_the_break(worker, snippet):
    report = run(worker, snippet(ITEM.format(head="")), Settings(backend="eager", error_on_graph_break=True))
    assert report["error"]["kind"] == "compile", report["error"]
    assert report["settings"]["error_on_graph_break"] is True


@pytest.mark.parametrize(
    ("settings", "why"),
    [
        # Measured on 2.13: a negative recompile_limit makes torch skip every frame, silently.
        (Settings(backend="eager", config=(("dynamo.recompile_limit", -3),)), "dynamo.recompile_limit=-3"),
        (Settings(backend="eager", stance="force_eager"), "the stance is force_eager"),
    ],
)
def test_a_run_that_compiled_nothing_says_so_and_why(worker, snippet, settings, why):
    report = run(worker, snippet(ITEM.format(head="")), settings)
    assert report["error"] is None and report["graph_count"] == 0 and report["calls"] == 1
    (note,) = [n for n in report["notes"] if n.startswith("torch compiled no graph")]
    assert why in note, note


def test_a_run_that_compiled_does_not_say_it_compiled_nothing(worker, snippet):
    report = run(worker, snippet(ITEM.format(head="")), Settings(backend="eager"))
    assert report["graph_count"] > 0
    assert not [n for n in report["notes"] if n.startswith("torch compiled no graph")]
