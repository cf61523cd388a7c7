"""The host's limits read from the environment, and which errors the memory cap claims."""

from __future__ import annotations

import pytest

from playground.engine.report import Report, RunError
from playground.worker.process import limits


def report(kind: str, type_: str, message: str, detail: str = "") -> Report:
    return Report(error=RunError(kind=kind, type=type_, message=message, detail=detail))


def test_the_cap_names_itself_on_host_allocation_failures_only():
    refused = "DefaultCPUAllocator: can't allocate memory: you tried to allocate 1073741824 bytes"
    named = limits.over_cap(report("snippet", "RuntimeError", refused), 512).error
    assert named.kind == "snippet" and named.message.startswith("over the per-run memory cap of 512 MiB")
    assert limits.over_cap(report("snippet", "MemoryError", ""), 512).error.message.startswith("over the")
    # The tool's own copies ran out: the snippet's data filled the cap, so it is a snippet error,
    # worded from the exception itself rather than "internal error".
    worker = report(
        "worker", "RuntimeError", "internal error in the worker", f"Traceback...\nRuntimeError: {refused}\n"
    )
    mine = limits.over_cap(worker, 512).error
    assert mine.kind == "snippet" and mine.message.endswith(f"RuntimeError: {refused}")
    # Not the cap's: a device's OOM, any other error, or no cap at all.
    cuda = report("snippet", "OutOfMemoryError", "CUDA out of memory. Tried to allocate 2.00 GiB")
    assert limits.over_cap(cuda, 512) is cuda
    other = report("snippet", "ValueError", "bad")
    assert limits.over_cap(other, 512) is other
    assert limits.over_cap(report("snippet", "MemoryError", ""), None).error.message == ""


@pytest.mark.parametrize(
    ("raw", "threads", "cap"), [("", None, None), ("4", 4, 4), ("0", None, None), ("x", None, None)]
)
def test_values_from_the_environment(monkeypatch: pytest.MonkeyPatch, raw: str, threads, cap):
    monkeypatch.setenv(limits.THREADS_ENV, raw)
    monkeypatch.setenv(limits.MEMORY_ENV, raw)
    assert limits.threads() == threads and limits.memory_cap_mib() == cap


def test_spare_turned_off_or_memory_short(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(limits.MIN_FREE_ENV, "0")
    monkeypatch.delenv(limits.SPARE_ENV, raising=False)
    assert limits.spare_wanted() and not limits.memory_short()
    monkeypatch.setenv(limits.SPARE_ENV, "0")
    assert not limits.spare_wanted()
    monkeypatch.delenv(limits.SPARE_ENV)
    monkeypatch.setenv(limits.MIN_FREE_ENV, str(1 << 24))
    assert limits.memory_short() and not limits.spare_wanted()
