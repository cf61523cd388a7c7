"""Session-wide test settings."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from playground.engine.sync import SyncWorker
    from tests.standalone import StandaloneRunner

# Inductor's on-disk cache outlives processes and sessions: a file left truncated by an earlier
# crash on this machine would fail compiles here that have nothing to do with it. The tests get
# a cache of their own inside the checkout (workers inherit the environment).
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", str(Path(__file__).resolve().parents[1] / ".inductor-cache-tests"))

# A report key of the wrong type is an error in every process the suite starts, not a silent
# default (playground/engine/report/wire.py's STRICT_ENV): a builder's mistake fails a test.
os.environ.setdefault("COMPILE_PLAYGROUND_STRICT_REPORTS", "1")

# Every process the suite starts inherits this mark; at the end, none may be left: after
# .ci/run, no process of the project's may be left. A developer's own app is not marked.
# (setdefault: pytest-xdist's workers inherit the controller's mark, which checks at the end.)
os.environ.setdefault("COMPILE_PLAYGROUND_TEST_SESSION", str(os.getpid()))
_MARK = f"COMPILE_PLAYGROUND_TEST_SESSION={os.environ['COMPILE_PLAYGROUND_TEST_SESSION']}"


def _marked_processes() -> list[str]:
    from tests.processes import live_processes

    found = []
    for pid, cmd in live_processes():
        if pid == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if _MARK.encode() in environ:
            found.append(f"{pid}: {cmd[:120]}")
    return found


#: The session's own temporary folder, inherited by every process it starts (TMPDIR): at the
#: end, nothing of ours may be left in it (a CI run once failed on a full disk, among 2,169
#: entries that killed workers had left in /tmp over a day of tests). A folder of its own, not
#: the machine's /tmp: the check used to remove every entry of ours made in /tmp while the session
#: ran, so a test session deleted the scratch folders of the workers of a developer's open app and
#: of another test session running beside it (their runs then failed on files gone from under
#: them). pytest's own tmp_path folders stay where they were (PYTEST_DEBUG_TEMPROOT).
_SYSTEM_TEMP = tempfile.gettempdir()
if "COMPILE_PLAYGROUND_TEST_TMPDIR" not in os.environ:  # the controller; xdist's workers inherit it
    os.environ["COMPILE_PLAYGROUND_TEST_TMPDIR"] = tempfile.mkdtemp(prefix="cp-tests-", dir=_SYSTEM_TEMP)
    os.environ.setdefault("PYTEST_DEBUG_TEMPROOT", _SYSTEM_TEMP)
os.environ["TMPDIR"] = os.environ["COMPILE_PLAYGROUND_TEST_TMPDIR"]
tempfile.tempdir = None  # gettempdir() reads TMPDIR again
_TEMP = Path(tempfile.gettempdir())


def _temp_left() -> list[str]:
    return sorted(p.name for p in _TEMP.glob("compile-playground-*"))


@pytest.hookimpl(trylast=True)  # after the plugins that keep files there until their own finish
def pytest_sessionfinish(session, exitstatus) -> None:  # noqa: ANN001 - pytest's hook signature
    """Fail the session if anything the tests started is still running a few seconds after,
    or left a file of ours in the temporary folder."""
    import shutil
    import time

    if not Path("/proc").is_dir() or os.environ.get("PYTEST_XDIST_WORKER"):
        return
    deadline = time.monotonic() + 8
    left = _marked_processes()
    while left and time.monotonic() < deadline:
        time.sleep(0.2)
        left = _marked_processes()
    if left:
        print("\nprocesses left behind by the test session:\n  " + "\n  ".join(left))
        session.exitstatus = 1
    litter = _temp_left()
    if litter:
        print(f"\nleft behind in {_TEMP} by the test session (now removed):\n  " + "\n  ".join(litter))
        session.exitstatus = 1
    shutil.rmtree(_TEMP, ignore_errors=True)


#: Modules whose tests need no torch worker: the pure tests and the app on a fake engine. They
#: make `make test-fast`; every other test is marked `torch` (a new module is, until listed here).
FAST_MODULES = frozenset(
    {
        "test_equivalence_props",
        "test_explain_unit",
        "test_dynamo_code_views",
        "test_tui_line_kernels",
        "test_tui_guard_what_if",
        "test_tui_run_flags",
        "test_wording_compiled",
        "test_wording_guard_what_if",
        "test_explain_guards",
        "test_settings_parse",
        "test_program_unit",
        "test_ranks_unit",
        "test_history",
        "test_import_hygiene",
        "test_import_contracts",
        "test_import_cycles",
        "test_tui_app",
        "test_tui_config",
        "test_tui_dynamo_code",
        "test_tui_explain",
        "test_tui_everyday",
        "test_tui_explain_snapshots",
        "test_tui_exports",
        "test_tui_files",
        "test_tui_history",
        "test_tui_findings",
        "test_tui_footer_keys",
        "test_tui_untrusted_input",
        "test_tui_shown_snippet",
        "test_live",
        "test_tui_import_hygiene",
        "test_tui_intake",
        "test_tui_code_timing_ladder_snapshots",
        "test_tui_lifecycle",
        "test_tui_matrix",
        "test_tui_panes",
        "test_tui_panes_compiled",
        "test_tui_where_time_goes_snapshots",
        "test_tui_render",
        "test_tui_snapshots",
        "test_tui_state",
        "test_worker_memory",
        "test_session",
        "test_follow",
        "test_follow_imports",
        "test_serve",
        "test_limits_unit",
        "test_docs",
    }
)


def pytest_collection_modifyitems(config, items) -> None:  # noqa: ANN001 - pytest's hook signature
    for item in items:
        if Path(str(item.fspath)).stem not in FAST_MODULES:
            item.add_marker(pytest.mark.torch)


@pytest.fixture(scope="session")
def standalone() -> Iterator[StandaloneRunner]:
    """Scripts run as `python FILE` would, forked from one process per pytest process that imported
    torch once (the import is what a fresh `python` adds, the same for every file): the gallery's
    files, and the plain programs test_reference_isolation takes as torch's truth."""
    from tests.standalone import StandaloneRunner

    runner = StandaloneRunner(Path(__file__).resolve().parents[1])
    yield runner
    runner.close()


@pytest.fixture(scope="session")
def worker() -> Iterator[SyncWorker]:
    """One warm worker for each pytest process's whole session, as the app and `watch` keep one:
    the engine tests and the gallery's checks share it (each run is a fresh fork of its template,
    which tests/engine/test_isolation.py checks). A worker per test module cost each xdist worker
    another torch start-up, and another Inductor start-up where both modules ran Inductor."""
    from playground.engine.sync import SyncWorker

    w = SyncWorker(timeout_s=60)
    w.start()
    yield w
    w.close()
