"""The read-order pass (io/read_order.py, jvm/src/.../OffsetRuns.java): runs in read order, and which splits they
prove clean. Reading with it must quarantine exactly what the exact checks on every split quarantine, whatever the
files' order; on a log written in arrival order it must prove the clean splits, and never a bad one."""
from __future__ import annotations

import os
import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyspark.sql import functions as F

from event_replay.io import offsets as offsets_mod
from event_replay.io import read_order
from event_replay.io.read_order import TickPartials, proven_clean, read_order_records
from source_logs import BASE, make_cfg
from test_offsets import _outcome, _random_log

pytestmark = pytest.mark.spark

SCHEMA = pa.schema([("split", pa.string()), ("offset", pa.int64()), ("arrival_time", pa.int64()),
                    ("event_time", pa.int64()), ("key", pa.string()), ("value", pa.int64())])


def _write_in_arrival_order(path, table: dict, files: int, seed: int) -> str:
    """The rows in (arrival, offset) order, cut at random points into `files` files: a log written as it arrived,
    a file per stretch of time (the files are listed in another order than their times)."""
    rnd = random.Random(seed)
    rows = sorted(zip(*table.values()), key=lambda r: (r[2], r[1]))
    cuts = sorted(rnd.sample(range(1, len(rows)), files - 1))
    parts = [rows[i:j] for i, j in zip([0] + cuts, cuts + [len(rows)])]
    rnd.shuffle(parts)
    os.makedirs(path, exist_ok=True)
    for i, part in enumerate(parts):
        cols = list(zip(*part)) if part else [()] * len(SCHEMA)
        pq.write_table(pa.table([list(c) for c in cols], schema=SCHEMA), os.path.join(path, f"part-{i}.parquet"))
    return str(path)


@pytest.mark.parametrize("seed,files", [(3, 1), (4, 3)])
def test_arrival_ordered_log_is_proven_and_quarantined_exactly(spark, tmp_path, monkeypatch, seed, files):
    table = _random_log(seed, n_splits=200)
    cfg = make_cfg(_write_in_arrival_order(tmp_path / "log", table, files, seed))
    sorted_checks: list[set[str]] = []
    real_sorted_check = offsets_mod._sorted_check

    def recording(parsed, s, o, a, carried, splits):
        sorted_checks.append(set(splits))
        return real_sorted_check(parsed, s, o, a, carried, splits)

    monkeypatch.setattr(offsets_mod, "_sorted_check", recording)
    fast = _outcome(spark, cfg)
    monkeypatch.setattr(offsets_mod, "_PRECHECK", False)
    exact = _outcome(spark, cfg)
    assert fast == exact
    clean, quarantined, _ = fast
    bad_splits = {q[0] for q in quarantined}
    assert {q[-1] for q in quarantined} >= {"duplicate_row", "duplicate_offset", "offset_out_of_order"}
    left = sorted_checks[0] if sorted_checks else set()
    assert bad_splits <= left  # never proven: a bad split always reaches the sorted check
    # Written in (arrival, offset) order, a clean split is one run per file, the files follow one another in time:
    # every clean split is proven without sorting.
    assert left == bad_splits


def test_without_the_extension_every_split_is_sorted(spark, tmp_path, monkeypatch):
    table = _random_log(5, n_splits=60)
    cfg = make_cfg(_write_in_arrival_order(tmp_path / "log", table, 1, 5))
    with_pass = _outcome(spark, cfg)
    monkeypatch.setattr(read_order, "_runs_class", lambda spark: None)
    seen: list[set[str]] = []
    real_sorted_check = offsets_mod._sorted_check
    monkeypatch.setattr(offsets_mod, "_sorted_check",
                        lambda parsed, s, o, a, carried, splits: seen.append(set(splits))
                        or real_sorted_check(parsed, s, o, a, carried, splits))
    assert _outcome(spark, cfg) == with_pass
    assert seen == [set(table["split"])]


def _records(spark, rows, max_runs=None, monkeypatch=None):
    """The pass over one partition of (code, split, folder, offset, arrival) rows, in that order."""
    df = spark.createDataFrame(rows, "c int, s string, f long, o long, a long").coalesce(1)  # no file: one hash
    if max_runs is not None:
        monkeypatch.setattr(read_order, "MAX_RUNS", max_runs)
    out = read_order_records(F.col("c"), F.col("s"), F.col("f"), F.col("o"), F.col("a"), df).records
    return sorted(out, key=lambda r: (r["c"], r["s"] or "", r["lo"] or 0, r["min_o"] or 0))


def test_runs_break_where_arrival_falls_or_offset_does_not_rise(spark):
    rows = [(0, "a", 0, 1, 10), (0, "b", 0, 7, 10), (0, "a", 0, 2, 10), (0, "a", 0, 3, 12),
            (0, "a", 0, 3, 13),  # offset not above: a new run
            (0, "a", 0, 4, 11),  # arrival falls: a new run
            (2, None, 0, None, None), (1, "x", 0, 9, 5)]
    recs = _records(spark, rows)
    runs_a = [(r["n"], r["lo"], r["hi"], r["min_o"], r["max_o"]) for r in recs if r["s"] == "a"]
    assert runs_a == [(3, 10, 12, 1, 3), (1, 11, 11, 4, 4), (1, 13, 13, 3, 3)]
    assert all(r["ordered"] for r in recs if r["c"] == 0)
    assert [(r["c"], r["s"], r["n"], r["lo"]) for r in recs if r["c"] != 0] == [(1, None, 1, 5), (2, None, 1, None)]
    assert proven_clean(recs, None) == {"b"}


def test_past_max_runs_a_split_is_summed_and_never_proven(spark, monkeypatch):
    rows = [(0, "a", 0, o, 100 - o) for o in range(10)]  # every row a run of its own
    recs = _records(spark, rows, max_runs=3, monkeypatch=monkeypatch)
    assert sorted(r["ordered"] for r in recs) == [False, True, True, True]  # 3 runs, then a sum
    assert sum(r["n"] for r in recs) == 10 and proven_clean(recs, None) == set()


def _run(s, lo, hi, min_o, max_o, ordered=True):
    return {"c": 0, "s": s, "lo": lo, "hi": hi, "min_o": min_o, "max_o": max_o, "ordered": ordered}


def test_runs_chain_when_each_ends_before_the_next_begins():
    touching = [_run("a", 5, 9, 10, 20), _run("a", 0, 5, 1, 9)]  # equal arrival at the seam is fine
    assert proven_clean(touching, None) == {"a"}
    assert proven_clean(touching, {"a": 0}) == {"a"}
    assert proven_clean(touching, {"a": 1}) == set()  # the first offset is not above the carried one
    assert proven_clean([_run("a", 0, 5, 1, 9), _run("a", 5, 9, 9, 20)], None) == set()  # offset 9 twice
    assert proven_clean([_run("a", 0, 6, 1, 9), _run("a", 5, 9, 10, 20)], None) == set()  # arrivals interleave
    assert proven_clean([_run("a", 0, 5, 1, 9, ordered=False)], None) == set()


def _tables_equal(a, b) -> bool:
    import numpy as np
    return (all(np.array_equal(getattr(a, f), getattr(b, f)) for f in ("split", "tick", "max_event_time", "row_ticks"))
            and (a.min_event_time, a.max_event_time_all) == (b.min_event_time, b.max_event_time_all))


def _clean_log(interval: int) -> tuple[dict, dict]:
    """400 rows over 200 ms in 5 splits, offsets rising with arrival in every split; periodic watermarks."""
    rnd = random.Random(interval)
    rows = [[f"s{rnd.randrange(5)}", 0, BASE + rnd.randrange(200), 0, rnd.choice("kq"), 1] for _ in range(400)]
    rows.sort(key=lambda r: r[2])
    for i, r in enumerate(rows):
        r[1], r[3] = i, r[2] - rnd.randrange(60)
    return ({name: list(col) for name, col in zip(SCHEMA.names, zip(*rows))},
            {"max_out_of_orderness": "1s", "interval": f"{interval}ms"})


@pytest.mark.parametrize("interval", [1, 7])
def test_the_passs_tick_partials_are_the_timelines_aggregate(spark, tmp_path, interval):
    """The pass's per-(split, tick) event times, summed on the driver, equal the timeline's own Spark aggregate
    of the clean rows, for any first tick (ticks before it are published at it); a log with a bad offset gives
    none (its clean rows are not the candidates)."""
    from event_replay.engine.timeline.tick_table import collect_tick_table
    from event_replay.io import read_source

    table, every = _clean_log(interval)
    cfg = make_cfg(_write_in_arrival_order(tmp_path / "log", table, 3, interval), watermark=every)
    data = read_source(spark, cfg)
    try:
        assert data.tick_partials is not None and data.tick_partials.interval == interval
        splits = sorted(set(table["split"]) - {"s4"})  # s4 as a side input: in the row ticks, not the splits
        taken = data.tick_partials.take()
        assert data.tick_partials.take() is None  # handed over once
        for first_tick in (BASE - 5 * interval, BASE + 50, BASE + 1000):
            spark_side = collect_tick_table(data.rows, splits, first_tick, interval)
            partials = TickPartials(interval, taken)
            passed = collect_tick_table(data.rows, splits, first_tick, interval, partials=partials)
            assert _tables_equal(passed, spark_side) and partials.take() is None
            groups = len(passed.tick)  # the main splits' (split, tick) groups: above the limit, the Spark path
            again = collect_tick_table(data.rows, splits, first_tick, interval, groups, TickPartials(interval, taken))
            assert again is not None
            assert collect_tick_table(data.rows, splits, first_tick, interval, groups - 1,
                                      TickPartials(interval, taken)) is None
    finally:
        data.release()
    table["offset"][5] = table["offset"][4]  # a duplicate offset (or one going back): quarantined
    data = read_source(spark, make_cfg(_write_in_arrival_order(tmp_path / "bad", table, 1, interval), watermark=every))
    try:
        assert data.quarantined_rows >= 1 and data.tick_partials is None
    finally:
        data.release()


@pytest.mark.parametrize("interval", [1, 7])
def test_past_the_bound_the_pass_writes_its_tick_records_in_buckets(spark, tmp_path, monkeypatch, interval):
    """Over the driver's bound the pass collects nothing and writes its entries to the scratch folder in buckets
    of ticks (io/tick_buckets.py); every bucket's entries, combined, are the timeline's own aggregate, for any first
    tick; each entry sits in the bucket of its tick."""
    from event_replay.engine.timeline.tick_table import collect_tick_table, combine_partials
    from event_replay.io import read_source, tick_buckets

    monkeypatch.setattr(read_order, "tick_partials_max", lambda spark: 10)
    monkeypatch.setattr(tick_buckets, "N_TICK_BUCKETS", 16)
    table, every = _clean_log(interval)
    data = read_source(spark, make_cfg(_write_in_arrival_order(tmp_path / "log", table, 3, interval),
                                       watermark=every))
    try:
        partials = data.tick_partials
        assert partials.over_bound and partials.take() is None
        b = partials.buckets
        assert b.first_tick == -(-min(table["arrival_time"]) // interval) * interval
        assert 1 < b.n_buckets <= 16 and sum(b.counts.values()) >= 10
        entries = spark.read.parquet(b.path).collect()
        assert all(r["_bucket"] == b.bucket_of(r["tick"]) for r in entries)
        every_bucket = tick_buckets.read_buckets(spark, b, 0, b.n_buckets - 1).toArrow()
        splits = sorted(set(table["split"]) - {"s4"})
        for first_tick in (BASE - 5 * interval, BASE + 50):
            spark_side = collect_tick_table(data.rows, splits, first_tick, interval, limit=10_000)
            assert _tables_equal(combine_partials(every_bucket, splits, first_tick), spark_side)
    finally:
        data.release()


def test_the_drivers_tick_bound_scales_with_a_local_heap_only(spark):
    """A local master takes 4M (split, tick) entries per GB of the driver's heap, between 4M and 16M; any other
    master keeps 4M (its Python driver's memory is the deployment's)."""
    heap_gb = int(spark.sparkContext._jvm.java.lang.Runtime.getRuntime().maxMemory()) / (1 << 30)
    want = int(min(16_000_000, max(4_000_000, heap_gb * 4_000_000)))
    assert read_order.tick_partials_max(spark) == want

    class Cluster:  # the master's name is all the bound reads for a non-local master
        class sparkContext:
            master = "spark://10.0.0.1:7077"
    assert read_order.tick_partials_max(Cluster) == read_order.TICK_PARTIALS_MAX == 4_000_000
