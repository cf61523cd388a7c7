"""Issue 21: distinct graph breaks, by site and break type, with torch's hint category."""

from __future__ import annotations

from pathlib import Path

from playground.engine.report import Report

from .conftest import run_result

GALLERY = Path(__file__).resolve().parents[2] / "snippets"


def test_break_hit_in_a_loop_is_one_site_with_its_count(worker):
    path = str(GALLERY / "break_in_loop.py")
    report = run_result(worker, path).report
    assert report.error is None
    (site,) = report.break_sites
    # every break record torch logged is this one break, at the if in scale
    assert site.count == report.graph_break_count == 3
    assert site.line == 36 and site.file == path
    assert site.gb_id == "GB0170" and site.gb_type == "Data-dependent branching"
    assert site.categories == ("FUNDAMENTAL",)
    assert site.registry_explanation and site.explanation
    assert site.caused == ("graph break in loop",)
    assert site.doc.endswith("/gb/gb0170.html")
    # the contract's graph_breaks keys on the free-text reason: the frame-skip record is apart
    assert len(report.graph_breaks) > 1
    wire = report.to_dict()
    del wire["break_sites"]
    assert Report.from_dict(wire).break_sites == ()


def test_break_with_only_its_own_hints_has_no_category(worker, snippet):
    path = snippet(
        """
        import torch

        def fn(x):
            y = x.sin()
            print("y", y.shape)
            return y.cos()

        def inputs():
            yield torch.randn(4)
            yield torch.randn(4)
        """
    )
    report = run_result(worker, path).report
    (site,) = report.break_sites
    assert site.line == 5 and site.count == 1
    # print's hints are its own ("Avoid calling builtin print..."), none of torch's category texts
    assert site.gb_id == "GB0059" and site.hints and site.categories == () and site.caused == ()
