"""The app driven headless with Pilot and a fake engine: the run pipeline end to end."""

from __future__ import annotations

import asyncio
import dataclasses
import os
from pathlib import Path

import pytest
from tui_fakes import HELLO, FakeEngine, bar_text, canned, pane_text, settle

from playground.engine.report import Report
from tui.engine.messages import SnippetChanged
from tui.factory import make_app
from tui.screens.gallery import GalleryScreen
from tui.screens.help import HelpScreen


def save(path: Path, text: str) -> None:
    """Write like an editor does: a temp file renamed over the original."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


async def test_break_counts_then_fix_on_save(snippet: Path):
    engine = FakeEngine()
    app = make_app(snippet, engine=engine, watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        summary = bar_text(app)
        assert "graphs 2  breaks 1  recompiles 0  equiv ok  speedup 2.00x" in summary
        assert "done in 0.5 s" in summary
        assert "BREAK: Data-dependent branching" in pane_text(app, "source")
        assert engine.runs[0][1].backend == "eager"  # from the snippet's SETTINGS

        save(snippet, snippet.read_text().replace("if y.sum() > 0:", "if True:"))
        app.post_message(SnippetChanged())
        await settle(pilot)
        assert "graphs 1  breaks 0" in bar_text(app)
        assert "STALE" not in bar_text(app)
        assert "if True:" in pane_text(app, "source")
        assert "BREAK" not in pane_text(app, "source")


async def test_same_bytes_saved_again_do_not_rerun(snippet: Path):
    engine = FakeEngine()
    app = make_app(snippet, engine=engine, watch=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        save(snippet, snippet.read_text())
        app.post_message(SnippetChanged())
        await settle(pilot)
        assert len(engine.runs) == 1
        await pilot.press("r")  # an explicit rerun always runs
        await settle(pilot)
        assert len(engine.runs) == 2


async def test_fullgraph_shows_the_refusal_as_this_runs_finding(snippet: Path):
    app = make_app(snippet, engine=FakeEngine(), watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f")
        await settle(pilot)
        assert app.settings.fullgraph is True
        assert "fullgraph on" in bar_text(app, "settings")
        summary = bar_text(app)
        # The refusal is the result (tests/tui/test_tui_findings.py has the details), not STALE.
        assert summary.startswith("fullgraph=True refused the break at line 10: Unsupported")
        assert "STALE" not in summary and "done" in summary
        assert "REFUSED by fullgraph=True" in pane_text(app, "source")
        assert "fullgraph=True refused this graph break" in pane_text(app, "breaks")
        await pilot.press("f")
        await settle(pilot)
        assert "STALE" not in bar_text(app) and "done" in bar_text(app)


async def test_cycling_dynamic_changes_the_recompile_count(snippet: Path):
    save(snippet, snippet.read_text() + "\n# SHAPES: three input shapes\n")
    engine = FakeEngine()
    app = make_app(snippet, engine=engine, watch=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        assert "recompiles 1" in bar_text(app)  # dynamic=None: one recompile, then dynamic
        await pilot.press("d")
        await settle(pilot)
        assert app.settings.dynamic is True and "recompiles 0" in bar_text(app)
        await pilot.press("d")
        await settle(pilot)
        assert app.settings.dynamic is False and "recompiles 2" in bar_text(app)
        assert [run[1].dynamic for run in engine.runs] == [None, True, False]


async def test_worker_crash_is_reported_and_the_next_run_recovers(snippet: Path):
    engine = FakeEngine()
    engine.crash_next = True
    app = make_app(snippet, engine=engine, watch=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        assert "error: worker error" in bar_text(app)
        assert any("torch worker restarted" in n.message for n in app._notifications)
        assert "WorkerDied" in pane_text(app, "output")
        await pilot.press("r")
        await settle(pilot)
        assert "graphs 2  breaks 1" in bar_text(app) and "error" not in bar_text(app)


async def test_newest_save_wins_and_the_stale_run_is_cancelled(snippet: Path):
    engine = FakeEngine()
    app = make_app(snippet, engine=engine, watch=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        engine.gate = asyncio.Event()  # hold the next run mid-flight
        save(snippet, snippet.read_text().replace("y * 2", "y * 3"))
        app.post_message(SnippetChanged())
        await pilot.pause(0.05)
        assert app.main.view.run.kind == "running"
        assert app.main.view.stale and "STALE" in bar_text(app)
        save(snippet, snippet.read_text().replace("if y.sum() > 0:", "if True:"))
        app.post_message(SnippetChanged())
        await pilot.pause(0.05)
        engine.gate.set()
        await settle(pilot)
        assert engine.cancels >= 1
        assert [("y * 3" in text, "if True" in text) for text, _ in engine.runs[1:]] == [
            (True, False),
            (True, True),
        ]
        assert "graphs 1  breaks 0" in bar_text(app) and not app.main.view.stale


async def test_a_late_result_of_a_superseded_run_is_dropped(snippet: Path):
    app = make_app(snippet, engine=FakeEngine(), watch=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        from tui.engine.messages import RunFinished

        before = app.main.view.report
        old = Report.from_dict(canned("recompile_limit")("", app.settings))
        app.post_message(RunFinished(app.generation - 1, old))
        await pilot.pause()
        assert app.main.view.report is before


async def test_backend_cycle_offers_the_backends_that_work_here(snippet: Path):
    app = make_app(snippet, engine=FakeEngine(), watch=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        seen = []
        for _ in range(3):
            await pilot.press("b")
            seen.append(app.settings.backend)
        # No CUDA in the fake's hello: no cudagraphs; tvm is in the palette only.
        assert seen == ["aot_eager", "inductor", "eager"]
        await pilot.press("m")
        assert app.settings.mode == "reduce-overhead"
        await settle(pilot)


async def test_cuda_key_is_disabled_without_cuda_and_works_with_it(snippet: Path):
    app = make_app(snippet, engine=FakeEngine(), watch=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        assert app.check_action("toggle", ("device",)) is None
        await pilot.press("c")
        assert app.settings.device == "cpu"
    app = make_app(snippet, engine=FakeEngine(hello=dataclasses.replace(HELLO, cuda_available=True)), watch=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        await pilot.press("c")
        await settle(pilot)
        assert app.settings.device == "cuda" and "device cuda" in bar_text(app, "title")


async def test_pane_keys_switch_tabs_and_wide_screens_show_source_beside(snippet: Path):
    app = make_app(snippet, engine=FakeEngine(), watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for key, pane in (("2", "breaks"), ("5", "recompiles"), ("9", "output"), ("1", "source")):
            await pilot.press(key)
            assert app.main.deck.current == pane
            assert app.main.query_one("#tabbar").active == pane
        assert not app.main.query_one("#side").display
    async with make_app(snippet, engine=FakeEngine(), watch=False).run_test(size=(160, 50)) as pilot:
        app = pilot.app
        await settle(pilot)
        assert app.main.query_one("#side").display
        assert app.main.deck.current == "graphs"
        await pilot.press("1")
        assert app.focused is app.main.query_one("#side-source")


async def test_help_and_gallery_open_and_close(snippet: Path, tmp_path: Path, monkeypatch):
    gallery = tmp_path / "gallery"
    gallery.mkdir()
    (gallery / "clean.py").write_text('"""Clean: no break."""\nSETTINGS = {"backend": "inductor"}\n')
    monkeypatch.setattr("tui.app.snippets_dir", lambda: gallery)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    engine = FakeEngine()
    app = make_app(snippet, engine=engine, watch=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("f")  # not passed through to the app behind the help
        assert app.settings.fullgraph is False
        await pilot.press("escape")
        await pilot.press("g")
        assert isinstance(app.screen, GalleryScreen)
        await pilot.press("enter")
        await settle(pilot)
        assert app.snippet == work / "clean.py" and (work / "clean.py").exists()
        assert app.settings.backend == "inductor"
        assert "clean.py" in bar_text(app, "title")
        assert engine.runs[-1][0].startswith('"""Clean')


async def test_edit_without_suspend_says_so(snippet: Path, monkeypatch):
    monkeypatch.setenv("EDITOR", "true")
    app = make_app(snippet, engine=FakeEngine(), watch=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        await pilot.press("e")  # the headless driver, like a browser, cannot suspend
        assert any("cannot suspend" in n.message for n in app._notifications)


async def test_edit_without_editor_says_so(snippet: Path):
    app = make_app(snippet, engine=FakeEngine(), watch=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        await pilot.press("e")
        assert any("$EDITOR" in n.message for n in app._notifications)


async def test_command_palette_runs_a_key_command(snippet: Path):
    app = make_app(snippet, engine=FakeEngine(), watch=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await pilot.press(*"fullgraph")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(pilot)
        assert app.settings.fullgraph is True


async def test_deleted_file_waits_and_recreated_file_reruns(snippet: Path):
    app = make_app(snippet, engine=FakeEngine(), watch=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        text = snippet.read_text()
        snippet.unlink()
        app.post_message(SnippetChanged())
        await settle(pilot)
        assert "waiting: branch.py not found" in bar_text(app)
        snippet.write_text(text)
        app.post_message(SnippetChanged())
        await settle(pilot)
        assert "done" in bar_text(app) and not app.main.view.stale


async def test_settings_edited_in_the_file_apply(snippet: Path):
    app = make_app(snippet, engine=FakeEngine(), watch=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        await pilot.press("d")  # a key change survives saves that leave SETTINGS alone
        await settle(pilot)
        save(snippet, snippet.read_text() + "\n")
        app.post_message(SnippetChanged())
        await settle(pilot)
        assert app.settings.dynamic is True
        save(snippet, snippet.read_text().replace('"backend": "eager"', '"backend": "aot_eager"'))
        app.post_message(SnippetChanged())
        await settle(pilot)
        assert app.settings.backend == "aot_eager"


async def test_a_save_that_does_not_parse_keeps_the_toggled_settings(snippet: Path):
    app = make_app(snippet, engine=FakeEngine(), watch=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        assert app.settings.backend == "eager"
        await pilot.press("b")  # the key's backend over SETTINGS' "eager"
        await settle(pilot)
        toggled = app.settings.backend
        assert toggled != "eager"
        good = snippet.read_text()
        for text in (good + "\ndef broken(:\n", good):  # half-way through an edit, then fixed
            save(snippet, text)
            app.post_message(SnippetChanged())
            await settle(pilot)
            assert app.settings.backend == toggled, text[-20:]


async def test_quit_closes_the_engine(snippet: Path):
    engine = FakeEngine()
    app = make_app(snippet, engine=engine, watch=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        await pilot.press("q")
    assert engine.closed


@pytest.mark.skipif(os.environ.get("CI_NO_INOTIFY") == "1", reason="no file events here")
async def test_the_watcher_sees_an_atomic_save(snippet: Path):
    app = make_app(snippet, engine=FakeEngine(), watch=True)
    async with app.run_test() as pilot:
        await settle(pilot)
        save(snippet, snippet.read_text().replace("if y.sum() > 0:", "if True:"))
        for _ in range(200):
            await pilot.pause(0.02)
            if "breaks 0" in bar_text(app) and app.main.view.run.kind == "done":
                break
        assert "graphs 1  breaks 0" in bar_text(app)


class _Broken(FakeEngine):
    async def run(self, request, on_event=None):
        raise RuntimeError("pipe closed")


class _NoTorch(FakeEngine):
    async def start(self):
        raise RuntimeError("No module named 'torch'")


async def test_an_engine_exception_becomes_a_readable_error(snippet: Path):
    app = make_app(snippet, engine=_Broken(), watch=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        assert "error: worker error: RuntimeError: pipe closed" in bar_text(app)
        assert "pipe closed" in pane_text(app, "output")


async def test_a_worker_that_cannot_start_says_why(snippet: Path):
    app = make_app(snippet, engine=_NoTorch(), watch=False)
    async with app.run_test() as pilot:
        await settle(pilot)
        assert "could not start the torch worker" in bar_text(app)
        assert "No module named 'torch'" in bar_text(app)


async def test_square_brackets_step_through_the_graphs(snippet: Path):
    app = make_app(snippet, engine=FakeEngine(canned("break")), watch=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("right_square_bracket")
        assert app.main.deck.current == "graphs"
        assert "graph 2 (2 of 2): FX code" in pane_text(app, "graphs")
        await pilot.press("right_square_bracket")  # stays on the last
        assert app.main.graph == 1
        await pilot.press("left_square_bracket")
        assert "graph 1 (1 of 2): FX code" in pane_text(app, "graphs")
