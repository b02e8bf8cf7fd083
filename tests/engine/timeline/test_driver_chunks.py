"""The driver path in chunks of ticks (engine/timeline/driver_chunks.py), forced for every case with chunks of a
few ticks, against the reference model; the Spark path is made to fail, so a case cannot pass through it."""
from __future__ import annotations

import importlib

import pytest
from hypothesis import HealthCheck, given, settings

from event_replay.engine.timeline import driver, driver_chunks
from event_replay.engine.timeline.carry import Ticks
from strategies import cases
from timeline_cases import run_timeline


@pytest.fixture
def tiny_chunks(monkeypatch):
    """Chunks of a few (split, tick) entries: a bucket per tick, the bound just above one tick's entries."""
    monkeypatch.setattr(driver_chunks, "N_TICK_BUCKETS", 1 << 20)
    monkeypatch.setattr(periodic, "periodic_spark", _no_spark_path)
    chunked = []
    original = driver_chunks.periodic_in_chunks
    monkeypatch.setattr(periodic, "periodic_in_chunks",
                        lambda rows, cfg, chunks, *a: chunked.append(len(chunks.chunks)) or original(rows, cfg,
                                                                                                     chunks, *a))
    return chunked


periodic = importlib.import_module("event_replay.engine.timeline.periodic")  # the package exports a function of that name


def _no_spark_path(*args, **kwargs):
    raise AssertionError("the Spark path ran: the chunks did not fit")


@settings(max_examples=8, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=cases())
def test_chunks_match_reference(spark, tiny_chunks, monkeypatch, case):
    """Every case's timeline, computed in a few chunks, equals the reference model's."""
    splits = {r.split for r in case.rows}
    monkeypatch.setattr(driver, "DRIVER_GROUPS_MAX", max(1, len(splits), len(case.rows) // 4))
    got, want = run_timeline(spark, case.rows, case.cfg, case.declared_splits)
    assert got == want


def test_the_cases_run_in_many_chunks(spark, tiny_chunks, monkeypatch):
    """The property above is not vacuous: a log of many ticks is cut into many chunks."""
    from strategies import random_case
    case = random_case(3, max_rows=200, max_splits=3)
    monkeypatch.setattr(driver, "DRIVER_GROUPS_MAX", 3)
    got, want = run_timeline(spark, case.rows, case.cfg, case.declared_splits)
    assert got == want
    assert tiny_chunks and tiny_chunks[0] > 10


def test_buckets_are_cut_at_the_bound():
    """Consecutive buckets while their entries fit; the last chunk ends at the range's last tick."""
    ticks = Ticks(interval=100, first=1000, last=1900, origin=1000)
    got = driver_chunks._cut("p", {0: 3, 1: 2, 2: 4, 4: 1}, 5, 2, ticks, limit=5)
    assert got.chunks == [(0, 1, 1000, 1300), (2, 4, 1400, 1900)]
    assert driver_chunks._cut("p", {0: 6}, 5, 2, ticks, limit=5) is None
