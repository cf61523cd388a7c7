"""The settings parser on arbitrary input (hypothesis), and its documented behaviour.

Contract of playground.engine.settings: `resolve_settings`, `settings_from_mapping`,
`read_snippet_settings` and `snippet_settings_error` never raise; `check_value` raises only
`SettingsError`; valid settings round-trip through a SETTINGS literal and through to_dict.
"""

from __future__ import annotations

import ast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from playground.engine.settings import (
    DEVICES,
    MODES,
    SETTING_KEYS,
    TARGETS,
    Settings,
    SettingsError,
    check_value,
    settings_from_mapping,
)
from playground.engine.snippet_settings import literal_settings, resolve_settings, snippet_settings_error

valid_settings = st.builds(
    Settings,
    fullgraph=st.booleans(),
    dynamic=st.sampled_from([None, True, False]),
    backend=st.sampled_from(["eager", "aot_eager", "inductor", "my_backend.v2", "cudagraphs"]),
    mode=st.sampled_from(MODES),
    device=st.sampled_from(DEVICES),
    cold=st.booleans(),
    target=st.sampled_from(TARGETS),
)
literals = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True)
    | st.text(max_size=20)
    | st.binary(max_size=8)
    | st.complex_numbers(),
    lambda inner: (
        st.lists(inner, max_size=3) | st.tuples(inner, inner) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
keys = st.sampled_from(SETTING_KEYS) | st.text(max_size=12) | st.integers() | st.tuples(st.integers())
FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _error_is_well_formed(error: dict | None) -> None:
    if error is None:
        return
    assert set(error) == {"kind", "type", "message", "line", "detail"}
    assert error["kind"] == "settings" and error["detail"] == ""
    assert isinstance(error["message"], str) and "\n" not in error["message"] and error["message"]
    assert error["line"] is None or (isinstance(error["line"], int) and error["line"] >= 1)


@FAST
@given(st.dictionaries(keys, literals, max_size=6))
def test_any_dict_gives_settings_and_named_problems(data: dict):
    resolved = settings_from_mapping(data)
    assert isinstance(resolved.settings, Settings)
    valid = {k: v for k, v in data.items() if k in SETTING_KEYS and _accepts(k, v)}
    assert len(resolved.problems) == len(data) - len(valid)
    for problem in resolved.problems:
        _error_is_well_formed(problem.to_error())
    _error_is_well_formed(resolved.error)


def _accepts(key: str, value: object) -> bool:
    try:
        check_value(key, value)
    except SettingsError:
        return False
    return True


@FAST
@given(st.sampled_from(SETTING_KEYS) | st.text(max_size=10), literals)
def test_check_value_raises_only_its_own_error(key: str, value: object):
    try:
        checked = check_value(key, value)
    except SettingsError as exc:
        _error_is_well_formed(exc.problem.to_error())
    else:
        assert key in SETTING_KEYS
        Settings(**{key: checked})  # a value Settings can hold


@FAST
@given(st.text(max_size=300))
def test_any_text_never_raises(text: str):
    _error_is_well_formed(snippet_settings_error(text))
    assert isinstance(resolve_settings(text).settings, Settings)
    assert isinstance(literal_settings(text), dict)


@FAST
@given(
    st.dictionaries(keys, literals, max_size=5),
    st.sampled_from(
        ["SETTINGS = {d}", "SETTINGS = dict({d})", "SETTINGS = dict(**{d})", "SETTINGS = [{d}]", "SETTINGS: dict = {d}"]
    ),
)
def test_any_settings_literal_never_raises(data: dict, form: str):
    _error_is_well_formed(snippet_settings_error("import torch\n" + form.format(d=repr(data)) + "\n"))


@FAST
@given(valid_settings)
def test_valid_settings_round_trip_through_a_literal(value: Settings):
    as_dict = value.to_dict()
    for text in (
        f"SETTINGS = {as_dict!r}\n",
        "SETTINGS = dict(" + ", ".join(f"{k}={v!r}" for k, v in as_dict.items()) + ")\n",
    ):
        resolved = resolve_settings(text)
        assert resolved.problems == ()
        assert resolved.settings == value
    assert Settings.from_dict(as_dict) == value
    assert settings_from_mapping(as_dict).settings == value


@FAST
@given(valid_settings, valid_settings)
def test_overrides_win_over_the_snippet(in_file: Settings, flags: Settings):
    resolved = resolve_settings(f"SETTINGS = {in_file.to_dict()!r}\n", flags.to_dict())
    assert resolved.problems == () and resolved.settings == flags


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ('SETTINGS = {"fullgraph": "false"}', 1, ("fullgraph", "'false'", "True or False")),
        ('x = 1\nSETTINGS = {\n    "backend": "eager",\n    "dynamic": "maybe",\n}', 4, ("dynamic", "'maybe'")),
        ('SETTINGS = {"fullgrpah": True}', 1, ("unknown key", "'fullgraph'")),
        ("SETTINGS = make()", 1, ("literal",)),
        ("SETTINGS = {'backend': BACKEND}", 1, ("backend", "literal")),
        ("SETTINGS = {**BASE}", 1, ("**",)),
        ("if FAST:\n    SETTINGS = {}", 2, ("block",)),
        ("SETTINGS = {}\nSETTINGS = {'fullgraph': True}", 2, ("more than once",)),
        ("SETTINGS = {'fullgraph': True}\nSETTINGS['dynamic'] = True", 2, ("changed",)),
        ("from config import SETTINGS", 1, ("literal",)),
        ("SETTINGS = None", 1, ("not a dict",)),
        ("SETTINGS = {'mode': 'fastest'}", 1, ("mode", "max-autotune")),
        ("SETTINGS = {'device': 'tpu'}", 1, ("device", "'cpu'")),
        ("SETTINGS = {'cold': 1}", 1, ("cold", "True or False")),
        ("SETTINGS = {'fullgraph': True, 'fullgraph': False}", 1, ("twice",)),
        ("SETTINGS = {'target': 'Fn'}", 1, ("target", "'Fn'", "'model', 'fn' or None")),
        ("SETTINGS = {'target': True}", 1, ("target", "True")),
    ],
)
def test_settings_problems_are_named_with_their_line(text: str, line: int, words: tuple[str, ...]):
    error = snippet_settings_error(text)
    assert error is not None
    _error_is_well_formed(error)
    assert error["line"] == line, error
    for word in words:
        assert word in error["message"], error["message"]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "import torch\n",
        "def f():\n    SETTINGS = {'a': 1}\n",  # not module level: not the snippet's SETTINGS
        "def broken(:\n",  # the worker reports the syntax error
        'SETTINGS = {"backend": "eager", "mode": "default", "dynamic": None}',
        "\ufeffSETTINGS = dict(fullgraph=True)",
    ],
)
def test_fine_or_absent_settings_are_not_errors(text: str):
    assert snippet_settings_error(text) is None


def test_dict_call_and_bom_are_read():
    assert resolve_settings("\ufeffSETTINGS = dict(fullgraph=True, backend='eager')").settings == Settings(
        fullgraph=True, backend="eager"
    )


def test_a_string_is_never_a_bool():
    resolved = resolve_settings('SETTINGS = {"fullgraph": "false", "cold": "true"}')
    assert resolved.settings.fullgraph is False and resolved.settings.cold is False
    assert [p.key for p in resolved.problems] == ["fullgraph", "cold"]


def test_valid_keys_survive_a_bad_neighbour_for_the_app():
    # The app opens with what is valid; the first run reports the rest as a settings error.
    assert literal_settings('SETTINGS = {"backend": "eager", "dynamic": "maybe"}') == {"backend": "eager"}


def test_the_literal_parse_matches_python():
    text = "SETTINGS = {'fullgraph': True, 'dynamic': None, 'backend': 'eager'}"
    namespace: dict = {}
    exec(compile(ast.parse(text), "<s>", "exec"), namespace)
    assert resolve_settings(text).settings == settings_from_mapping(namespace["SETTINGS"]).settings
