"""The run state and the summary bar, in words."""

from __future__ import annotations

from dataclasses import replace

from tui_fakes import load_fixture, plain

from playground.engine.hello import WorkerHello
from playground.engine.report import Report, Timings
from playground.engine.settings import Settings
from tui.keys.table import KEYS, PANES, markdown_table
from tui.run.view import RunState, View
from tui.widgets.summary_bar import settings_text, summary_text, title_text


def test_run_state_words():
    assert RunState("starting").words() == "starting torch…"
    assert RunState("running", "compiling", 2, 5, "compiling call 2").words() == "compiling call 2/5…"
    assert RunState("running", "compiling", 1, None).words() == "compiling call 1…"
    assert RunState("running", "timing", message="timing eager vs compiled").words() == "timing eager vs compiled…"
    assert RunState("done", duration_s=1.234).words() == "done in 1.2 s"
    assert RunState("error", message="compile error at line 3: Unsupported").words().startswith("error: compile")
    assert RunState("queued", message="saved").words() == "saved: rerunning…"
    assert RunState("idle").words() == "idle"


def test_summary_has_the_tokens_then_the_state_and_says_stale():
    report = Report.from_dict(load_fixture("break"))
    view = View(report=report, run=RunState("done", duration_s=1.4))
    assert plain(summary_text(view)).strip() == (
        "graphs 2  breaks 1  recompiles 0  equiv ok  speedup 0.22x  |  done in 1.4 s"
    )
    stale = View(report=report, stale=True, run=RunState("running", "loading"))
    assert plain(summary_text(stale)).startswith("STALE  graphs 2")
    assert "no result yet  |  starting torch…" in plain(summary_text(View()))


def test_summary_narrows_before_it_wraps():
    """At 80 columns (78 inside the bar) the common line with an unreliable timing fits."""
    report = Report.from_dict(load_fixture("break"))
    line = plain(summary_text(View(report=report, run=RunState("done", duration_s=12.3)))).strip()
    tail = "  |  done in 12.3 s"
    assert line.endswith(tail)
    counts = line[: -len(tail)]
    for width, expected in (
        (len(line), line),
        (len(line) - 1, counts + " | done in 12.3 s"),
        (len(line) - 3, counts + " | done 12.3 s"),
    ):
        fitted = plain(summary_text(View(report=report, run=RunState("done", duration_s=12.3)), width=width))
        assert fitted.strip() == expected and len(fitted.strip()) <= width
    # Across ranks, with an unreliable speedup, the counts go single-spaced to fit the 78 columns.
    ranks = replace(report, world_size=2, timings=Timings(speedup=1.1, unreliable=True))
    wide = plain(summary_text(View(report=ranks, run=RunState("done", duration_s=12.3)))).strip()
    assert len(wide) > 78
    fitted = plain(summary_text(View(report=ranks, run=RunState("done", duration_s=12.3)), width=78)).strip()
    assert fitted == "r0/2 graphs 2 breaks 1 recompiles 0 equiv ok speedup unreliable | done 12.3 s"
    error = View(report=report, run=RunState("error", message="compile error at line 3: Unsupported"))
    # an error keeps its words whole (the bar wraps them) rather than lose the state
    assert summary_text(error, width=20).plain.endswith(" | error: compile error at line 3: Unsupported")


def test_title_and_settings_bars():
    view = View(snippet_name="s.py", hello=WorkerHello(torch_version="2.13.0", cuda_available=True))
    assert plain(title_text(view)).strip() == "s.py  torch 2.13.0  device cpu (cuda available)"
    assert "torch: starting…" in plain(title_text(View(snippet_name="s.py")))
    text = plain(settings_text(Settings(fullgraph=True, dynamic=False, backend="eager")), width=200)
    assert text.strip() == "f fullgraph on d dynamic false b backend eager m mode default c device cpu"
    used = plain(settings_text(Settings(device="cuda"), Settings(device="cpu")), width=300)
    assert "(worker used:" in used


def test_every_key_has_an_id_a_tooltip_and_a_pane_key_each():
    ids = [key.id for key in KEYS]
    assert len(ids) == len(set(ids))
    assert all(key.help for key in KEYS)
    assert [key.key for key in KEYS if key.id.startswith("pane-")] == [str(n % 10) for n in range(1, len(PANES) + 1)]
    table = markdown_table()
    assert "| `f` | Toggle fullgraph" in table and "| `?` | Help" in table


def test_the_new_keys_are_in_the_table_the_help_and_the_palette_share():
    table = markdown_table()
    for row in ("| `x` | Settings matrix", "| `h` | Run history", "| `t` | Export trace", "| `w` | Write Markdown"):
        assert row in table
    assert "| `[` | Previous graph" in table and "| `]` | Next graph" in table
