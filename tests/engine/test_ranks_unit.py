"""A run across ranks, torch-free: the ranks setting and flag, the merged report, what differs
between ranks and its words, and one rank as the app's panes show it."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import pytest

from playground.cli.flags import count_arg, dynamic_arg, ranks_arg
from playground.engine import ranks
from playground.engine.report import (
    DdpBuckets,
    Equivalence,
    GraphBreak,
    GuardSet,
    Recompile,
    Report,
    RunError,
    WorkerInfo,
)
from playground.engine.report.explanation import Explanation, ReasonRow, RecompileDetail
from playground.engine.settings import MAX_RANKS, Settings, SettingsError, check_value
from playground.engine.wording import ranks as rank_words
from playground.worker.capture import explain


def _rank(pid: int, **fields: object) -> Report:
    values: dict[str, object] = {"graph_count": 1, "calls": 3, **fields}
    return Report(worker=WorkerInfo(pid=pid), **values)  # type: ignore[arg-type]


def _guards(*lines: str) -> dict[str, object]:
    """A report's guards as the worker gives them: torch's lines and their parse (GuardDetail)."""
    entry = GuardSet(compile_id="0/0", guards=lines)
    return {"guards": (entry,), "explanation": Explanation(guards=explain.guard_details((entry,), "snip.py"))}


def test_ranks_is_a_setting_from_1_to_the_most_and_absent_from_the_json_at_1() -> None:
    assert "ranks" not in Settings().to_dict()
    assert Settings(ranks=2).to_dict()["ranks"] == 2
    assert Settings.from_dict({"ranks": 4}).ranks == 4
    for bad in (0, MAX_RANKS + 1, "2", True, 2.0, None):
        assert Settings.from_dict({"ranks": bad}).ranks == 1
        with pytest.raises(SettingsError):
            check_value("ranks", bad, where="SETTINGS")
    assert check_value("ranks", 3) == 3
    assert "ranks=2" in Settings(ranks=2).label() and "ranks" not in Settings().label()


@pytest.mark.parametrize("text", ["0", "-1", "9", "two", "", "1.5", "1e3", " ", "1_0", "\u0662", "+2", "\uff12"])
def test_the_ranks_flag_refuses_what_is_not_a_number_of_processes(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="number of ranks"):
        ranks_arg(text)


def test_the_ranks_flag_takes_a_whole_number() -> None:
    assert ranks_arg("2") == 2 and ranks_arg(" 8 ") == 8


@pytest.mark.parametrize("text", ["1_0", "\u0661\u0660", "\uff11\uff10", "-3", "0", "ten"])
def test_a_count_flag_takes_only_ascii_digits(text: str) -> None:
    # Python's int() reads "1_0" and other scripts' digits as 10: no user types a count so.
    with pytest.raises(argparse.ArgumentTypeError):
        count_arg(text)
    assert count_arg("10") == 10


def test_a_negative_count_is_out_of_range_and_an_empty_dynamic_a_slip() -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="out of range"):
        count_arg("-1")
    for empty in ("", " "):
        with pytest.raises(argparse.ArgumentTypeError, match="empty value"):
            dynamic_arg(empty)
    assert dynamic_arg("auto") is None and dynamic_arg("true") is True


def test_ranks_that_agree_have_no_divergence_and_the_top_level_is_rank_0() -> None:
    merged = ranks.merged([_rank(10), _rank(11)])
    assert merged.world_size == 2 and merged.divergence == ()
    assert merged.worker == WorkerInfo(pid=10)
    assert [r.world_size for r in merged.ranks] == [None, None]
    assert rank_words.headline(merged).text == "ranks 2: every rank agrees"
    back = Report.from_dict(merged.to_dict())
    assert back == merged


def test_one_rank_recompiling_reads_as_only_that_rank_with_the_reason() -> None:
    detail = RecompileDetail(
        function="fn", entry="0/1", call=3, reasons=(ReasonRow(arg="x", guard="size of x dim 0", was="4", now="3"),)
    )
    rank1 = _rank(
        11,
        graph_count=2,
        recompile_count=1,
        recompiles=(Recompile(function="fn", reasons=("0/0: tensor 'x' size mismatch",)),),
        explanation=Explanation(recompiles=(detail,)),
    )
    merged = ranks.merged([_rank(10), rank1])
    by_what = {d.what: d for d in merged.divergence}
    assert set(by_what) == {"graph_count", "recompiles"}
    assert dict(by_what["graph_count"].ranks) == {"0": 1, "1": 2}
    assert by_what["recompiles"].message.startswith("only rank 1 recompiled, at call 3: size of x dim 0 4 → 3")
    assert Report.from_dict(merged.to_dict()).divergence == merged.divergence


def test_ranks_that_agree_in_groups_are_named_together() -> None:
    merged = ranks.merged([_rank(10), _rank(11, graph_count=2), _rank(12), _rank(13)])
    (entry,) = merged.divergence
    assert entry.message == "graphs differ between ranks: ranks 0, 2 and 3: 1, rank 1: 2"


def test_breaks_guards_equivalence_and_errors_each_differ_in_words() -> None:
    brk = GraphBreak(reason="print", line=9)
    rank0 = _rank(10, **_guards("TENSOR_MATCH: x  # line 9", "ID_MATCH: ___check_obj_id(L['net'], 1403228921)"))
    rank1 = _rank(
        11,
        graph_breaks=(brk,),
        graph_break_count=1,
        **_guards("TENSOR_MATCH: x  # line 7", "ID_MATCH: ___check_obj_id(L['net'], 1403991123)"),
        equivalence=Equivalence(ok=False, verdict="differs"),
        error=RunError(kind="snippet", type="ValueError", message="boom", line=4),
    )
    by_what = {d.what: d for d in ranks.merged([rank0, rank1]).divergence}
    # Torch's comment and an object's id are each process's own: the guards are the same.
    assert "guards" not in by_what
    assert "rank 1: line 9" in by_what["graph_breaks"].message
    assert by_what["equivalence"].message == "equivalence differs between ranks: rank 0: n/a, rank 1: FAIL"
    assert "rank 1: snippet error (line 4): ValueError: boom" in by_what["error"].message


def test_a_guard_only_one_rank_holds_is_named_by_its_kind() -> None:
    rank0 = _rank(10, **_guards("TENSOR_MATCH: check_tensor(L['a'], Tensor, torch.float32, size=[4])"))
    rank1 = _rank(
        11,
        **_guards(
            "TENSOR_MATCH: check_tensor(L['a'], Tensor, torch.float32, size=[4])",
            "LAMBDA_GUARD: 2 <= L['a'].size()[0]",
        ),
    )
    (entry,) = ranks.merged([rank0, rank1]).divergence
    assert entry.what == "guards"
    assert "only rank 1 has a LAMBDA_GUARD guard: 2 <= a.size()[0]" in entry.message
    assert "1 entry, 1 guards" in entry.message and "1 entry, 2 guards" in entry.message


def test_shown_puts_one_ranks_facts_on_top_and_keeps_the_rest() -> None:
    merged = ranks.merged([_rank(10), _rank(11, graph_count=2)])
    one = ranks.shown(merged, 1)
    assert one.graph_count == 2 and one.world_size == 2 and one.divergence == merged.divergence
    assert ranks.shown(merged, None) is merged and ranks.shown(merged, 7) is merged
    lines = [line.text for line in rank_words.rank_lines(one)]
    assert lines[-1].startswith("▸ rank 1") and lines[-2].startswith("  rank 0")
    plain = Report()
    assert ranks.shown(plain, 1) is plain and rank_words.rank_lines(plain) == ()


def test_a_rank_line_fits_80_columns_when_nothing_but_counts_differ() -> None:
    merged = ranks.merged([_rank(10), _rank(11, graph_count=2, recompile_count=1)])
    lines = [line.text for line in rank_words.rank_lines(merged)[-2:]]
    assert len(lines) == 2 and any("graph" in text for text in lines), lines  # the difference is worded
    for text in lines:
        assert len(text) <= 78, text


def test_merged_needs_a_rank() -> None:
    with pytest.raises(ValueError):
        ranks.merged([])


def test_ddps_cuts_are_said_as_graphs_not_breaks_and_survive_the_wire() -> None:
    cut = _rank(10, ddp_buckets=DdpBuckets(bucket_mb=1.0, splits={"4/0": 4}))
    merged = ranks.merged([cut, _rank(11, ddp_buckets=DdpBuckets(bucket_mb=1.0, splits={"4/0": 4}))])
    assert Report.from_dict(merged.to_dict()) == merged
    (line,) = [x.text for x in rank_words.rank_lines(merged) if x.text.startswith("DDP")]
    assert "cut compile 4/0 into 4 graphs at the bucket boundaries; graphs, not graph breaks" in line
    none = rank_words.bucket_line(_rank(10, ddp_buckets=DdpBuckets(bucket_mb=25.0)))
    assert none is not None and none.text.startswith("DDP buckets of 25 MiB: one graph per compiled frame")
    assert rank_words.bucket_line(_rank(10)) is None and "ddp_buckets" not in _rank(10).to_dict()


#: What torchrun 2.13 gives the one process of node 1 in a two-node job (c10d rendezvous).
TORCHRUN = {
    "RANK": "1",
    "LOCAL_RANK": "0",
    "GROUP_RANK": "1",
    "WORLD_SIZE": "2",
    "LOCAL_WORLD_SIZE": "1",
    "MASTER_ADDR": "localhost",
    "MASTER_PORT": "39883",
    "TORCHELASTIC_RUN_ID": "job7",
    "TORCHELASTIC_RESTART_COUNT": "0",
    "TORCHELASTIC_USE_AGENT_STORE": "True",
}


def test_torchruns_environment_is_a_launch_and_a_partial_one_is_not() -> None:
    launch = ranks.launch_of(TORCHRUN)
    assert launch == ranks.Launch(
        rank=1, world_size=2, local_rank=0, master_addr="localhost", master_port=39883, run_id="job7"
    )
    assert ranks.Launch.from_dict(dataclasses.asdict(launch)) == launch
    # Only some of torchrun's variables (no TORCHELASTIC_RUN_ID): the playground runs on its own.
    assert ranks.launch_of({k: v for k, v in TORCHRUN.items() if k != "TORCHELASTIC_RUN_ID"}) is None
    assert ranks.launch_of({**TORCHRUN, "WORLD_SIZE": "1", "RANK": "0"}) is None  # a job of one process
    assert ranks.launch_of({**TORCHRUN, "RANK": "2"}) is None
    assert ranks.launch_of({**TORCHRUN, "MASTER_PORT": "0"}) is None
    assert ranks.launch_of({**TORCHRUN, "MASTER_PORT": "x"}) is None
    unshared = ranks.launch_of({**TORCHRUN, "TORCHELASTIC_USE_AGENT_STORE": "False"})
    assert unshared is not None and not unshared.agent_store


def test_a_ranks_place_under_torchrun_crosses_the_pipe_whole() -> None:
    from playground.worker.run.spine.request import RankPlace, WorkerRequest

    launch = ranks.launch_of(TORCHRUN)
    place = RankPlace(1, 2, 0, 0, "/tmp/x", 10.0, launch)
    request = WorkerRequest.from_message({"op": "run", "path": "/a.py", "text": "", "rank": dataclasses.asdict(place)})
    assert request.rank == place
    assert WorkerRequest.from_message(request.to_message()).rank == place


def test_each_rank_of_a_job_presents_to_a_folder_of_its_own(tmp_path: Path) -> None:
    from playground.engine.session import followed_folder, presenting_folder, rank_folders

    assert presenting_folder(tmp_path, TORCHRUN) == tmp_path / "rank1"
    assert presenting_folder(tmp_path, {}) == tmp_path
    assert followed_folder(tmp_path) == tmp_path  # nobody yet: the folder itself, waited on
    for name in ("rank10", "rank2", "rankx", "rank3"):
        (tmp_path / name / "runs").mkdir(parents=True)
    (tmp_path / "rank1").mkdir()  # made, never written: not a session
    (tmp_path / "rank0").symlink_to(tmp_path / "rank3")  # a link: never read through
    assert rank_folders(tmp_path) == [tmp_path / "rank2", tmp_path / "rank3", tmp_path / "rank10"]
    assert followed_folder(tmp_path) == tmp_path / "rank2"
    (tmp_path / "runs").mkdir()  # a presenter's own folder is followed as it is
    assert followed_folder(tmp_path) == tmp_path


def test_a_follower_of_a_jobs_session_reads_the_lowest_ranks_folder_once_it_has_runs(tmp_path: Path) -> None:
    from playground.engine.session import SessionReader, SessionWriter

    follower = SessionReader(tmp_path / "job")  # before the job: no folder at all
    first = follower.poll()
    assert first is not None and first.presenter is None and not first.runs
    writers = [SessionWriter(tmp_path / "job" / f"rank{r}", snippet_name="s.py") for r in (1, 0)]
    for rank, writer in zip((1, 0), writers):
        writer.publish(Report(graph_count=rank + 1), "x = 1\n", Settings(), "s.py")
    news = follower.poll()
    assert news is not None and follower.source == tmp_path / "job" / "rank0"
    assert [run.report.graph_count for run in news.runs] == [1]
    for writer in writers:
        writer.close()
    # Kept once a run was read from it: the run numbers are that folder's.
    follower.poll()
    assert follower.source == tmp_path / "job" / "rank0"


def test_only_check_watch_and_follow_run_under_torchrun(monkeypatch):
    """Under torchrun's environment the app, matrix, bisect and serve's app are refused in one
    line saying what to run instead (each process of the job would start its own screen or
    search); check, watch, follow and serve --follow go on. Outside torchrun, nothing refused."""
    from playground.cli.main import _not_a_rank

    for key, value in TORCHRUN.items():
        monkeypatch.setenv(key, value)
    for command, rest in [("app", []), ("matrix", ["f.py"]), ("bisect", ["f.py"]), ("serve", ["f.py"])]:
        said = _not_a_rank(command, rest)
        assert said is not None and "watch SNIPPET --present DIR" in said and "follow DIR" in said, command
    for command, rest in [("check", []), ("watch", []), ("follow", ["d"]), ("serve", ["--follow", "d"])]:
        assert _not_a_rank(command, rest) is None, command
    monkeypatch.delenv("TORCHELASTIC_RUN_ID")
    assert _not_a_rank("app", []) is None
