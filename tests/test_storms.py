"""Save storms on `watch --json-lines`: 200 versions of the snippet written as fast as editors
can save them, in each way editors save, then quiet. The newest content must win: the last
report printed is of the final bytes, with its `complete` stage, and no report of an older
version is ever printed after one of a newer version. A half-written file (truncated, a pause,
then the rest) is never the last word once the write completes.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.faults import GOOD
from tests.watching import WAIT_S, WatchProcess

VERSIONS = 200
#: Versions written back to back before a pause a little longer than the debounce, so that
#: runs start mid-storm and the next burst lands while they are in flight: the storm tests
#: cancellation and ordering, not only the debounce. (An eager run of these takes ~0.1 s.)
BURST = 10
PAUSES_S = (0.06, 0.08, 0.1, 0.13, 0.17)
DEBOUNCE_S = "0.05"
#: No line may follow the final report within this quiet period.
QUIET_S = 1.5


def version(n: int) -> str:
    """Version `n` of a valid, quick snippet (backend eager); each version's bytes differ."""
    return GOOD + f"# version {n}\n"


def sha(text: str | bytes) -> str:
    return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()


class Watch(WatchProcess):
    """The storms' watch: a short debounce, and quiet means QUIET_S without a line."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, "--debounce", DEBOUNCE_S, "--timeout", "30")

    def wait_quiet(self, quiet_s: float = QUIET_S, timeout: float = WAIT_S) -> None:
        super().wait_quiet(quiet_s, timeout)


@pytest.fixture
def snippet(tmp_path: Path):
    """A watched snippet at version 0, its first report printed."""
    path = tmp_path / "snippet.py"
    path.write_text(version(0))
    watch = Watch(path)
    try:
        watch.wait_complete(sha(version(0)), timeout=120)
        yield path, watch
    finally:
        watch.close()


# The ways editors save. Each writes version `n` over the file holding version `n - 1`.
def in_place(path: Path, n: int) -> None:
    with open(path, "w") as fh:  # truncate, then write: nano, echo >, many IDEs
        fh.write(version(n))


def temp_then_replace(path: Path, n: int) -> None:
    tmp = path.with_name(f".snippet.py.{n}.swp")  # vim and VS Code: a temp file renamed over
    tmp.write_text(version(n))
    os.replace(tmp, path)


def delete_then_create(path: Path, n: int) -> None:
    path.unlink()
    path.write_text(version(n))


def sed_in_place(path: Path, n: int) -> None:
    # sed -i writes a temp file in the same folder and renames it over the original.
    subprocess.run(["sed", "-i", f"s/^# version {n - 1}$/# version {n}/", str(path)], check=True, timeout=10)


SAVES: dict[str, Callable[[Path, int], None]] = {
    "in_place": in_place,
    "temp_then_replace": temp_then_replace,
    "delete_then_create": delete_then_create,
    "sed_in_place": sed_in_place,
}


def assert_newest_wins(watch: Watch, order: dict[str, int], final: str) -> None:
    """The stream after a storm: newest content last, completed, never stale after newer."""
    assert not watch.bad, f"lines that are not JSON: {watch.bad[:3]}"
    lines = watch.lines
    completes = [ln for ln in lines if ln["stage"] == "complete"]
    assert completes[-1]["content_sha256"] == final, (
        f"the last complete line is not the final content: {watch.summary()}"
    )
    assert lines[-1]["stage"] == "complete" and lines[-1]["content_sha256"] == final, (
        f"a line came after the final content's report: {watch.summary()}"
    )
    assert completes[-1]["error"] is None, completes[-1]["error"]
    assert completes[-1]["graph_count"] == 1 and completes[-1]["equivalence"]["ok"], completes[-1]
    # Stale never after newer: versions of the printed lines never go back. Bytes that are no
    # version (an in-place write caught half done) are not ordered, but never the last word.
    newest, newest_at = -1, -1
    for index, line in enumerate(lines):
        n = order.get(line["content_sha256"])
        if n is None:
            continue
        assert n >= newest, (
            f"line {index} reports version {n} after line {newest_at} reported version {newest}: {watch.summary()}"
        )
        newest, newest_at = n, index
    # The final content's diagnostics, if printed, are followed by its complete line.
    final_stages = [ln["stage"] for ln in lines if ln["content_sha256"] == final]
    assert final_stages[-1] == "complete", f"the final content's last line is {final_stages[-1]}"


@pytest.mark.parametrize("how", list(SAVES), ids=list(SAVES))
def test_save_storm_newest_content_wins(how: str, snippet):
    path, watch = snippet
    save = SAVES[how]
    order = {sha(version(n)): n for n in range(VERSIONS + 1)}
    started = time.monotonic()
    for n in range(1, VERSIONS + 1):
        save(path, n)
        if n % BURST == 0 and n < VERSIONS:
            time.sleep(PAUSES_S[(n // BURST) % len(PAUSES_S)])
    storm_s = time.monotonic() - started
    assert path.read_text() == version(VERSIONS), f"{how} did not leave the final version in place"
    final = sha(version(VERSIONS))
    watch.wait_complete(final)
    watch.wait_quiet()
    assert watch.proc.poll() is None, f"watch exited ({watch.proc.returncode}): {watch.stderr[-2000:]}"
    assert_newest_wins(watch, order, final)
    assert storm_s < 30, f"the storm itself took {storm_s:.1f} s"


@pytest.mark.parametrize("cut", ["empty", "mid_file"])
def test_half_written_file_is_never_the_last_word(cut: str, snippet):
    path, watch = snippet
    full = version(1)
    # Truncated and nothing yet (an empty snippet), or cut before inputs() (a snippet without it).
    at = 0 if cut == "empty" else full.index("def inputs")
    half, rest = full[:at], full[at:]
    with open(path, "w") as fh:
        fh.write(half)
        fh.flush()
        time.sleep(0.3)  # longer than the debounce: the half is seen, and may be run
        fh.write(rest)
    final = sha(full)
    watch.wait_complete(final)
    watch.wait_quiet()
    order = {sha(version(0)): 0, sha(half): 1, final: 2}
    assert_newest_wins(watch, order, final)
    halves = [i for i, ln in enumerate(watch.lines) if ln["content_sha256"] == sha(half)]
    first_full = next(i for i, ln in enumerate(watch.lines) if ln["content_sha256"] == final)
    assert all(i < first_full for i in halves), f"the half was reported after the full file: {watch.summary()}"


@pytest.mark.parametrize("reader", ["read_snippet", "read_regular_bytes"])
def test_a_fifo_saved_between_stat_and_open_never_blocks(reader: str, tmp_path: Path, monkeypatch):
    """The storm's worst timing, made deterministic: the snippet becomes a FIFO (no writer) just
    after the reader checked it was a regular file. The read must fail at once, not hang."""
    from playground.engine import snippet as snippet_module

    path = tmp_path / "snippet.py"
    path.write_text(version(0))
    real_stat = os.stat
    swapped = threading.Event()

    def stat_then_swap(target, *args, **kwargs):
        result = real_stat(target, *args, **kwargs)
        if not swapped.is_set() and os.fspath(target) == str(path):
            swapped.set()
            path.unlink()
            os.mkfifo(path)
        return result

    outcome: list[BaseException | bytes | str] = []

    def read() -> None:
        try:
            result = getattr(snippet_module, reader)(path)
            outcome.append(result if isinstance(result, bytes) else result.text)
        except BaseException as exc:  # noqa: BLE001 - any outcome is recorded and judged below
            outcome.append(exc)

    monkeypatch.setattr(os, "stat", stat_then_swap)
    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    thread.join(2)
    monkeypatch.undo()
    blocked = thread.is_alive()
    if blocked:
        # Free the reader: a writer's open completes the reader's, which then reads EOF.
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(5)
    assert not blocked, f"{reader} blocked on a FIFO saved between its stat() and its open()"
    assert outcome, f"{reader} neither returned nor raised"
    if swapped.is_set():
        # The swap came after a stat() by name: either the read refused the FIFO, or the stat
        # came after the content was already read (e.g. resolving the path), and that content
        # is the regular file's.
        assert isinstance(outcome[0], OSError | snippet_module.SnippetError) or outcome[0] in (
            version(0),
            version(0).encode(),
        ), outcome
    else:
        # No stat() by name before the open (e.g. open, then fstat the descriptor): no window
        # for the swap, and the regular file reads as it was.
        assert outcome[0] == version(0).encode() or outcome[0] == version(0), outcome
