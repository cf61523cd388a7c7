"""The session folder's pieces without an app: the presenter's settings survive the trip through
the command line a fork opens the playground with; a reused folder keeps counting; the files are
readable by followers."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from playground.cli.flags import overrides_of
from playground.cli.main import parse
from playground.engine.report import Report
from playground.engine.session import SessionReader, SessionWriter, setting_flags, write_new_file
from playground.engine.session.writer import SessionError
from playground.engine.settings import Settings
from playground.engine.snippet_settings import resolve_settings


def test_setting_flags_give_exactly_the_settings_whatever_the_snippet_says():
    settings = Settings(
        fullgraph=False,
        dynamic=True,
        backend="aot_eager",
        mode="max-autotune",
        cold=True,
        config=(("dynamo.capture_scalar_outputs", True), ("dynamo.recompile_limit", 4)),
        stance="fail_on_recompile",
        error_on_graph_break=True,
    )
    args = parse("check", ["x.py", *setting_flags(settings)])
    text = "SETTINGS = {'fullgraph': True, 'dynamic': False, 'backend': 'eager'}\n"
    assert resolve_settings(text, overrides_of(args)).settings == settings
    plain = Settings()
    assert resolve_settings(text, overrides_of(parse("check", ["x.py", *setting_flags(plain)]))).settings == plain


def test_a_reused_session_keeps_counting_and_followers_can_read(tmp_path: Path):
    folder = tmp_path / "s"
    report = Report.from_dict({"settings": {}, "stage": "complete"})
    first = SessionWriter(folder)
    first.publish(report, "a\n", Settings(), "a.py")
    first.close()
    second = SessionWriter(folder)
    assert second.publish(report, "b\n", Settings(), "a.py").number == 2
    news = SessionReader(folder).poll()
    assert [run.source for run in news.runs] == ["a\n", "b\n"] and news.presenter.live
    for path in [folder, folder / "runs", folder / "presenter.json", *(folder / "runs").iterdir()]:
        assert path.stat().st_mode & stat.S_IROTH, path  # the folder's parent decides, not umask
    assert not [p for p in (folder / "runs").iterdir() if p.name.startswith(".")]  # no temp left


def test_a_presenter_json_no_session_wrote_is_never_written_over(tmp_path: Path):
    for mine in (b"mine\n", b"{}", b'{"live": true}', b"[1, 2]", b"\xff\xfe"):
        folder = tmp_path / f"s{len(list(tmp_path.iterdir()))}"
        folder.mkdir()
        (folder / "presenter.json").write_bytes(mine)
        with pytest.raises(SessionError, match="not a session's presenter file"):
            SessionWriter(folder)
        assert (folder / "presenter.json").read_bytes() == mine
        assert sorted(p.name for p in folder.iterdir()) == ["presenter.json"]  # nothing made either
    # A link by that name, even to a presenter file a session wrote, is not written through.
    real = tmp_path / "real"
    SessionWriter(real).close()
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "presenter.json").symlink_to(real / "presenter.json")
    with pytest.raises(SessionError, match="cannot read"):
        SessionWriter(linked)
    assert (linked / "presenter.json").is_symlink()


def test_write_new_file_never_replaces(tmp_path: Path):
    dest = tmp_path / "demo-run1.py"
    assert write_new_file(dest, b"one") == dest
    assert write_new_file(dest, b"two") == tmp_path / "demo-run1-2.py"
    assert dest.read_bytes() == b"one"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo-run1-2.py", "demo-run1.py"]


def test_a_presenter_on_another_machine_is_taken_at_its_word(tmp_path: Path):
    """A torchrun node on another machine writes to a shared folder: its pid means nothing
    here, so `live` is all a follower has; on this machine a dead pid is a presenter gone."""
    from playground.engine.session.records import PresenterState, this_host

    writer = SessionWriter(tmp_path / "s", snippet_name="t.py")
    try:
        state = SessionReader(tmp_path / "s").poll().presenter
        assert state is not None and state.host == this_host() and state.present
    finally:
        writer.close()
    dead = 2**22 + 12345  # past any pid this machine gives
    elsewhere = PresenterState(live=True, pid=dead, host="another-node")
    assert PresenterState.from_dict(elsewhere.to_dict()) == elsewhere
    assert elsewhere.present
    assert not PresenterState(live=True, pid=dead, host=this_host()).present
    assert not PresenterState(live=False, pid=dead, host="another-node").present
