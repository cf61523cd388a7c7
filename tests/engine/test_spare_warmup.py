"""How much a spare child warms itself after each run: the warm-up experiment where the machine
has room, only its thread pools and heap where it is busier than its cores (a shared server),
and what COMPILE_PLAYGROUND_SPARE_WARMUP asks either way."""

from __future__ import annotations

import os

import pytest

from playground.worker.process import warmup


@pytest.mark.parametrize(("load", "wanted"), [(0.3, True), (1.9, True), (2.0, False), (12.0, False)])
def test_the_experiment_only_where_the_machine_has_room(monkeypatch, load: float, wanted: bool):
    monkeypatch.delenv("COMPILE_PLAYGROUND_SPARE_WARMUP", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))
    assert warmup.spare_experiment_wanted() is wanted


@pytest.mark.parametrize(("asked", "load", "wanted"), [("experiment", 12.0, True), ("pools", 0.1, False)])
def test_the_variable_decides(monkeypatch, asked: str, load: float, wanted: bool):
    monkeypatch.setenv("COMPILE_PLAYGROUND_SPARE_WARMUP", asked)
    monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))
    assert warmup.spare_experiment_wanted() is wanted


def test_no_load_average_means_the_experiment(monkeypatch):
    monkeypatch.delenv("COMPILE_PLAYGROUND_SPARE_WARMUP", raising=False)

    def unavailable() -> tuple[float, float, float]:
        raise OSError("no load average here")

    monkeypatch.setattr(os, "getloadavg", unavailable)
    assert warmup.spare_experiment_wanted() is True
