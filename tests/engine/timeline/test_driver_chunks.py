"""The driver path in chunks of ticks (engine/timeline/driver_chunks.py), forced for every case with chunks of a
few ticks, against the reference model; the Spark path is made to fail, so a case cannot pass through it."""
from __future__ import annotations

import importlib

import pytest
from hypothesis import HealthCheck, given, settings

from event_replay.engine.timeline import driver_chunks, tick_table
from event_replay.engine.timeline.carry import Ticks
from event_replay.io import read_order, tick_buckets
from event_replay.io.tick_buckets import TickBuckets
from strategies import cases
from timeline_cases import run_timeline


@pytest.fixture
def tiny_chunks(monkeypatch):
    """Chunks of a few (split, tick) entries: a bucket per tick, the bound just above one tick's entries."""
    monkeypatch.setattr(tick_buckets, "N_TICK_BUCKETS", 1 << 20)
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
    monkeypatch.setattr(tick_table, "DRIVER_GROUPS_MAX", max(1, len(splits), len(case.rows) // 4))
    got, want = run_timeline(spark, case.rows, case.cfg, case.declared_splits)
    assert got == want


@settings(max_examples=8, derandomize=True, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=cases())
def test_chunks_of_the_reads_records_match_reference(spark, tiny_chunks, monkeypatch, case):
    """The same with the entries the read-order pass wrote past its bound (io/read_order.py): one entry per read
    partition, not per (split, tick), bucketed over the rows' own ticks."""
    bound = max(1, len({r.split for r in case.rows}), len(case.rows) // 4)
    monkeypatch.setattr(read_order, "tick_partials_max", lambda spark: bound)
    monkeypatch.setattr(tick_table, "DRIVER_GROUPS_MAX", bound)
    got, want = run_timeline(spark, case.rows, case.cfg, case.declared_splits, with_read_partials=True)
    assert got == want


@pytest.mark.parametrize("with_read_partials", [False, True])
def test_the_cases_run_in_many_chunks(spark, tiny_chunks, monkeypatch, with_read_partials):
    """The properties above are not vacuous: a log of many ticks is cut into many chunks, over the read's entries
    when it wrote them."""
    from strategies import random_case
    case = random_case(3, max_rows=200, max_splits=3)
    # The read's entries are per read partition (5 here, timeline_cases.read_partials): a tick of 3 splits may
    # hold 15, and a bucket over the bound sends the range to the Spark path.
    bound = 15 if with_read_partials else 3
    monkeypatch.setattr(tick_table, "DRIVER_GROUPS_MAX", bound)
    monkeypatch.setattr(read_order, "tick_partials_max", lambda spark: bound)
    written = []
    monkeypatch.setattr(periodic, "plan_chunks", lambda rows, splits, ticks, w, _f=periodic.plan_chunks:
                        written.append(w is not None) or _f(rows, splits, ticks, w))
    got, want = run_timeline(spark, case.rows, case.cfg, case.declared_splits, with_read_partials)
    assert got == want
    assert tiny_chunks and tiny_chunks[0] > 5
    assert written == [with_read_partials]


def test_buckets_are_cut_at_the_bound():
    """Consecutive buckets while their entries fit; the last chunk ends at the range's last tick."""
    ticks = Ticks(interval=100, first=1000, last=1900, origin=1000)
    buckets = TickBuckets("p", first_tick=1000, width=200, n_buckets=5, counts={0: 3, 1: 2, 2: 4, 4: 1})
    assert driver_chunks._cut(buckets, ticks, limit=5).chunks == [(0, 1, 1000, 1300), (2, 4, 1400, 1900)]
    assert driver_chunks._cut(TickBuckets("p", 1000, 200, 5, {0: 6}), ticks, limit=5) is None


def test_buckets_outside_the_range_count_with_its_ends():
    """The read buckets its own tick range; a range that starts later or ends earlier holds the entries before its
    first tick in its first chunk (published there) and those after its last tick in its last."""
    ticks = Ticks(interval=100, first=1400, last=2100, origin=1000)
    buckets = TickBuckets("p", first_tick=1000, width=200, n_buckets=8, counts={0: 1, 1: 1, 2: 2, 3: 1, 4: 2, 6: 1})
    # bucket 2 holds 1400 (the first tick), 5 holds 2100: 0-1 count with 2, 6-7 with 5
    assert driver_chunks._cut(buckets, ticks, limit=4).chunks == [(0, 2, 1400, 1500), (3, 7, 1600, 2100)]
    assert driver_chunks._cut(buckets, ticks, limit=3) is None  # bucket 2 holds 4 entries with those before it
