"""Which remedies apply to which site, on canned reports and sources (torch-free): the rules of
playground/worker/run/fixes/candidates.py and how a variant carries one. What each remedy then
does is torch's, checked by tests/test_gallery_fixes.py."""

from __future__ import annotations

from playground.engine.report import BreakSite, GuardFailure, Recompile, Report
from playground.engine.run_request import RunRequest
from playground.engine.settings import Settings
from playground.engine.snippet import PreparedRun, SnippetSource
from playground.worker.run.fixes.candidates import propose
from playground.worker.run.fixes.variant import reference_request, variant_request
from playground.worker.run.spine.request import WorkerRequest

SOURCE = """\
import torch


def helper(g, limit):
    if g.norm() > limit:
        return g * 0.5
    return g


def fn(x, n):
    s = x.sum().item()
    print("s", s)
    return helper(x, 1.0) * n


def inputs():
    yield torch.randn(3), 2
"""

ITEM_HINT = (
    "Set `torch._dynamo.config.capture_scalar_outputs = True` or `export TORCHDYNAMO_CAPTURE_SCALAR_OUTPUTS=1` "
    "to include these operations in the captured graph."
)
REPORT = Report(
    break_sites=(
        BreakSite(line=11, gb_type="Unsupported Tensor.item() call", hints=(ITEM_HINT,)),
        BreakSite(line=12, gb_type="Failed to trace builtin operator"),
        BreakSite(
            line=5, gb_type="Data-dependent branching", hints=("Use `torch.cond` to express dynamic control flow.",)
        ),
    ),
    recompiles=(
        Recompile(
            function="fn",
            line=10,
            failures=(GuardFailure(check="tensor 'x' size mismatch at index 0. expected 3, actual 4"),),
        ),
        Recompile(function="fn", line=10, failures=(GuardFailure(check="n == 2"),)),
    ),
)


def _remedies(ask: str) -> list[tuple[str, int | None, str]]:
    return [(c.target.kind, c.target.line, c.remedy) for c in propose(REPORT, SOURCE, ask).candidates]


def test_a_hint_naming_a_config_key_is_that_key():
    (item,) = [c for c in propose(REPORT, SOURCE, "break:11").candidates]
    assert item.remedy == "config" and item.config == (("dynamo.capture_scalar_outputs", True),)
    assert item.change == "torch._dynamo.config.capture_scalar_outputs = True"


def test_a_print_on_the_line_is_reorderable_logging():
    (printed,) = propose(REPORT, SOURCE, "break:12").candidates
    assert printed.remedy == "reorderable_logging"
    assert printed.config == (("dynamo.reorderable_logging_functions", ("print",)),)


def test_a_break_in_a_helper_gets_torchs_four_ways_around_it_with_the_custom_ops_schema_from_the_call():
    found = {c.remedy: c for c in propose(REPORT, SOURCE, "break:5").candidates}
    assert {"disable", "nonstrict_trace", "allow_in_graph", "custom_op"} <= set(found)
    op = found["custom_op"]
    assert "def helper_op(g: torch.Tensor, limit: float) -> torch.Tensor:" in op.change
    assert "register_fake" in op.change and "helper = " in op.epilogue


def test_a_size_guard_is_dynamic_or_mark_dynamic_on_that_argument_and_a_value_guard_dynamic():
    found = _remedies("recompile")
    assert ("recompile", 10, "dynamic") in found and ("recompile", 10, "mark_dynamic") in found
    (mark,) = [c for c in propose(REPORT, SOURCE, "recompile:10").candidates if c.remedy == "mark_dynamic"]
    assert "mark_dynamic(x, 0)" in mark.change and "[0], 0)" in mark.epilogue


def test_the_ask_picks_a_kind_or_one_site():
    assert {kind for kind, _, _ in _remedies("break")} == {"break"}
    assert {kind for kind, _, _ in _remedies("recompile")} == {"recompile"}
    assert {line for _, line, _ in _remedies("break:12")} == {12}
    assert {kind for kind, _, _ in _remedies("all")} == {"break", "recompile"}
    advice = propose(REPORT, SOURCE, "break:5").rewrites
    assert "torch.cond" in advice[0].rewrite


def test_a_variant_changes_only_its_run_and_its_reference_loads_the_file_as_it_is():
    source = SnippetSource("/tmp/snip.py", SOURCE, "sha")
    base = WorkerRequest(RunRequest(PreparedRun("/tmp/snip.py", Settings(), None, "sha", source)), id=7)
    (helper,) = [c for c in propose(REPORT, SOURCE, "break:5").candidates if c.remedy == "disable"]
    variant = variant_request(base, helper, 1, "/tmp/fix1.json")
    assert variant.run.text.startswith(SOURCE) and variant.run.text.endswith(helper.epilogue)
    assert variant.id == "7_fix1" and variant.report_to == "/tmp/fix1.json" and not variant.run.passes.fixes
    assert reference_request(base, variant).run.text == SOURCE
    (config,) = propose(REPORT, SOURCE, "break:11").candidates
    configured = variant_request(base, config, 2, "/tmp/fix2.json")
    assert configured.run.text == SOURCE and dict(configured.run.settings.config) == {
        "dynamo.capture_scalar_outputs": True
    }
