"""io/output.py: what the outputs say about a firing and a late row (docs/semantics.md "Outputs").

+inf is not null: a firing at a stream watermark of +inf (every split idle, a side input declared) and an end-of-input
flush both have no timestamp, so the exact long goes next to it (fire_watermark_ms, late_watermark_ms), and only
the flush has a null one. A late row keeps every source column, also the event-time column that ingestion and
processing time do not read."""
from __future__ import annotations

import struct
from types import SimpleNamespace

import pytest

from event_replay.io.output import windows_output
from event_replay.job import run_replay
from event_replay.semantics.durations import POS_INF
from source_logs import BASE, make_cfg, write_parquet

pytestmark = pytest.mark.spark

# p0 has two rows; the side input `rules` none. p0 goes idle at tick BASE+1600, so the stream moves to +inf (the
# side input), [BASE, BASE+1000) fires there, and p0's row at BASE+5000 is late at +inf.
LOG = {"split": ["p0", "p0"], "offset": [0, 1], "arrival_time": [BASE + 100, BASE + 5000],
       "event_time": [BASE + 100, BASE + 200], "key": ["k", "k"], "value": [1, 2]}
IDLE = {"emit": "periodic", "interval": 200, "idle_timeout": 1000, "max_out_of_orderness": 0}


def _replay(spark, tmp_path, name, table, window=(), **sections):
    src = write_parquet(tmp_path / f"{name}-log", table)
    cfg = make_cfg(src, out=tmp_path / f"{name}-out", window={"type": "tumbling", "size": 1000, **dict(window)},
                   **sections)
    run_replay(spark, cfg)
    out = tmp_path / f"{name}-out"
    return ([r.asDict() for r in spark.read.parquet(str(out / "windows")).collect()],
            [r.asDict() for r in spark.read.parquet(str(out / "late_events")).collect()])


def test_a_firing_at_plus_infinity_is_not_an_end_of_input_flush(spark, tmp_path):
    windows, late = _replay(spark, tmp_path, "inf", LOG, source={"side_inputs": ["rules"]}, watermark=IDLE)
    assert [(w["fire_reason"], w["fire_watermark"], w["fire_watermark_ms"]) for w in windows] == \
        [("watermark", None, POS_INF)]
    assert [(r["offset"], r["late_watermark"], r["late_watermark_ms"]) for r in late] == [(1, None, POS_INF)]
    # Without the side input the stream stops at BASE+99 (p0 idle), so the window (both rows) fires at the flush.
    windows, _ = _replay(spark, tmp_path, "flush", LOG, watermark=IDLE)
    assert [(w["fire_reason"], w["fire_watermark"], w["fire_watermark_ms"], w["cnt"]) for w in windows] == \
        [("end_of_input", None, None, 2)]


def test_late_events_keep_the_source_event_time_column_with_ingestion_time(spark, tmp_path):
    table = dict(LOG, event_time=[42, 43])  # not what ingestion time reads: it reads the arrival time
    _, late = _replay(spark, tmp_path, "ingestion", table, source={"side_inputs": ["rules"]}, watermark=IDLE,
                      window={"time": "ingestion"})
    assert [(r["offset"], r["arrival_time"], r["event_time"], r["value"]) for r in late] == [(1, BASE + 5000, 43, 2)]
    assert set(late[0]) == {*table, "late_watermark", "late_watermark_ms"}


def test_every_nan_of_an_aggregate_is_written_as_the_one_nan(spark):
    """inf + -inf gives a NaN whose sign bit depends on the JIT's operand order: the windows output writes the one
    NaN (0x7ff8...) so that reruns write the same bits; -0.0 stays -0.0 (Spark's sum and min tell it apart)."""
    negative_nan = struct.unpack(">d", bytes.fromhex("fff8000000000000"))[0]
    firings = spark.createDataFrame(
        [("k", 0, 10, 0, 10, "watermark", negative_nan, 1), ("k", 0, 10, 1, 12, "late_row", -0.0, 2)],
        "key string, window_start long, window_end long, fire_index long, fire_watermark long, "
        "fire_reason string, total double, cnt long")
    out = windows_output(firings, SimpleNamespace(aggregations={"total": "sum(value)", "cnt": "count(*)"}))
    bits = [struct.pack(">d", r["total"]).hex() for r in out.orderBy("fire_index").collect()]
    assert bits == ["7ff8000000000000", "8000000000000000"]
    assert [f.name for f in out.schema.fields][6:8] == ["total", "cnt"]


def test_a_cheap_scan_is_gathered_into_its_one_file_without_a_shuffle(spark):
    """A frame of the driver's files is read by the task that writes its one file; any other frame is shuffled into
    it, so that its own work keeps its partitions. Both give the same rows in the same order."""
    from event_replay.io.output import arranged
    frame = spark.range(0, 1000, 1, 4).selectExpr("id % 7 AS a", "id AS b")
    plans = {}
    for narrow in (False, True):
        out = arranged(frame, ["a", "b"], gather_narrow=narrow)
        plans[narrow] = out._jdf.queryExecution().executedPlan().toString()
        assert [tuple(r) for r in out.collect()] == sorted((i % 7, i) for i in range(1000))
        assert out.rdd.getNumPartitions() == 1
    assert "Exchange" in plans[False] and "Exchange" not in plans[True]


def test_the_watermarks_of_a_driver_timeline_are_written_in_their_order(spark, tmp_path):
    """The driver's watermark changes, gathered without a shuffle, land in the one file in the canonical order."""
    import pyarrow.parquet as pq
    from event_replay.engine import replay
    from event_replay.history.partitions import Clock
    from event_replay.io.source import read_source
    log = {"split": ["p0", "p1", "p0", "p1", "p0"], "offset": [0, 0, 1, 1, 2],
           "arrival_time": [BASE + 100, BASE + 150, BASE + 900, BASE + 2600, BASE + 4000],
           "event_time": [BASE + 100, BASE + 120, BASE + 800, BASE + 2500, BASE + 3900], "key": ["k"] * 5,
           "value": [1, 2, 3, 4, 5]}
    src = write_parquet(tmp_path / "wm-log", log)
    cfg = make_cfg(src, out=tmp_path / "wm-out", window={"type": "tumbling", "size": 1000}, watermark=IDLE)
    source = read_source(spark, cfg)
    result, _ = replay(spark, source.rows, cfg, ["p0", "p1"], Clock.of_source(source))
    assert result.watermarks_from_driver
    run_replay(spark, cfg)
    files = sorted((tmp_path / "wm-out" / "watermarks").glob("*.parquet"))
    table = pq.read_table(files[0]).to_pylist()
    assert len(files) == 1 and len(table) > 4
    key = [(r["replay_time_ms"], r["scope"], r["split"] or "", r["idle"]) for r in table]
    assert key == sorted(key)
