"""A recompile reason names its argument whole, quotes and all: `kwargs['position_ids']` had been
cut at its first quote (`kwargs[`), so the reason lost its argument and its was -> now (as in
every recompile of Hugging Face's generate(), whose model_kwargs is such a dict).

The two real runs go through the session's warm worker with the settings `check` would resolve
(a fresh `check` process each cost a torch start-up for what a run's report and the text report
show alike; tests/engine/test_isolation.py holds a warm run to a fresh process's)."""

from __future__ import annotations

from pathlib import Path

from playground.cli.textreport import render
from playground.engine.report import Report
from playground.engine.snippet import prepare_run
from playground.engine.sync import SyncWorker
from playground.worker.capture.explain import guarded_arg, reason_row


def _check(worker: SyncWorker, path: Path) -> Report:
    """What `check PATH --no-timing` reports: the snippet's SETTINGS resolved as `check` does."""
    prepared = prepare_run(path)
    assert prepared.error is None, prepared.error
    return worker.run(str(path), prepared.settings, timing=False, prepared=prepared).report


KWARGS = """\
import torch

SETTINGS = {"backend": "eager", "dynamic": False}


def fn(x, kwargs):
    return x.sum() + kwargs["position_ids"].sum()


def inputs():
    return [(torch.ones(3), {"position_ids": torch.ones(5)}), (torch.ones(3), {"position_ids": torch.ones(6)})]
"""


def test_a_dict_entry_argument_is_named_whole_with_was_and_now():
    text = "tensor 'L['model_kwargs']['position_ids']' size mismatch at index 1. expected 5, actual 6"
    assert guarded_arg(text) == "model_kwargs['position_ids']"
    row = reason_row(text, "/snip.py", {}, None)
    assert (row.arg, row.was, row.now) == ("model_kwargs['position_ids']", "5", "6")
    assert guarded_arg("tensor 'x' size mismatch at index 0. expected 2, actual 3") == "x"


def test_check_names_the_dict_entry_whose_size_changed(worker: SyncWorker, tmp_path: Path):
    path = tmp_path / "kwargs.py"
    path.write_text(KWARGS)
    report = _check(worker, path).to_dict()  # what `check --json` prints
    (detail,) = report["recompile_details"]
    (row,) = detail["reasons"]
    assert (row["arg"], row["was"], row["now"]) == ("kwargs['position_ids']", "5", "6"), row


IDENTITY = """\
import torch

SETTINGS = {"backend": "eager"}


def fn(x, act):
    return act(x)


def inputs():
    return [(torch.ones(3), torch.relu), (torch.ones(3), torch.tanh)]
"""


def test_an_identity_guard_says_what_it_was_built_for_and_what_came_instead(worker: SyncWorker, tmp_path: Path):
    """torch's id guard names no `==` value: the text report had printed the guard as the
    argument and again as the change (the same text twice, ids and all)."""
    path = tmp_path / "identity.py"
    path.write_text(IDENTITY)
    text = render(_check(worker, path))  # what `check` prints
    (line,) = [ln for ln in text.splitlines() if ln.startswith("  call 2 fn ")]
    assert line.count("___check_obj_id") <= 1, line
    assert " act: id " in line and "-> another object: builtin_function_or_method" in line, line
    row = reason_row("___check_obj_id(act, 42), type=<class 'function'>", "/snip.py", {"act": "function"}, None)
    assert (row.arg, row.guard, row.was, row.now) == (
        "act",
        "object identity of act",
        "id 42",
        "another object: function",
    )
