"""The IO layer: time conversion on read, quarantine reasons, the replay range, declared splits, atomic writes."""
from __future__ import annotations

import datetime as dt
import os

import pyarrow as pa
import pytest
from pyspark.sql import functions as F

from event_replay.io import prepare_source, read_source, write_outputs
from event_replay.semantics.config_keys import ConfigError
from event_replay.semantics.durations import NEG_INF, POS_INF
from source_logs import BASE, UTC, make_cfg, write_parquet

pytestmark = pytest.mark.spark

def ts(ms: int, extra_us: int = 0) -> dt.datetime:
    return dt.datetime.fromtimestamp(ms / 1000, tz=UTC).replace(microsecond=(ms % 1000) * 1000 + extra_us)


def clean_rows(data) -> list[tuple]:
    return sorted(tuple(r) for r in data.rows.select("split", "offset", "arrival_time", "event_time", "key")
                  .collect())


def reasons(data) -> dict:
    return {r["offset"]: r["reason"] for r in data.quarantine.collect()}


def test_timestamp_and_epoch_ms_columns_read_the_same(spark, tmp_path):
    arrivals = [BASE + 5, BASE + 1000, BASE + 2001]
    events = [BASE - 100, BASE + 900, BASE + 1500]
    # Timestamps with sub-millisecond parts (999 us) must truncate to the same ms as the integers.
    ts_type = pa.timestamp("us", tz="UTC")
    p_ts = write_parquet(tmp_path / "ts", {
        "split": ["a", "a", "b"], "offset": [0, 1, 0],
        "arrival_time": pa.array([ts(a, 999) for a in arrivals], ts_type),
        "event_time": pa.array([ts(e, 999) for e in events], ts_type),
        "key": ["x", "y", "x"], "value": [1, 2, 3]})
    p_ms = write_parquet(tmp_path / "ms", {
        "split": ["a", "a", "b"], "offset": [0, 1, 0], "arrival_time": arrivals, "event_time": events,
        "key": ["x", "y", "x"], "value": [1, 2, 3]})
    d_ts = read_source(spark, make_cfg(p_ts))
    d_ms = read_source(spark, make_cfg(p_ms))
    expected = sorted(("a" if i < 2 else "b", [0, 1, 0][i], arrivals[i], events[i], ["x", "y", "x"][i])
                      for i in range(3))
    assert clean_rows(d_ts) == expected
    assert clean_rows(d_ms) == expected
    assert dict(d_ts.rows.dtypes)["arrival_time"] == "bigint"
    assert d_ts.timestamp_roles == {"arrival_time", "event_time"} and d_ms.timestamp_roles == set()
    assert (d_ts.start_ms, d_ts.end_ms) == (arrivals[0], arrivals[-1])
    assert d_ts.splits == ["a", "b"]


def test_time_bounds_apply_after_truncation(spark, tmp_path):
    # -0.5 ms is in millisecond -1 (floor, as Flink's TimestampData.getMillisecond gives): before 1970, so
    # quarantined; +0.5 ms is millisecond 0, the first valid instant. The last valid one is 9999-12-31T23:59:59.999.
    top = dt.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)
    p = write_parquet(tmp_path / "neg", {
        "split": ["a", "a", "a", "a"], "offset": [0, 1, 2, 3],
        "arrival_time": pa.array([-500, 500, 1500, 2500], pa.timestamp("us", tz="UTC")),
        "event_time": pa.array([0, -1500, 999, top], pa.timestamp("us", tz="UTC")), "key": ["k"] * 4})
    data = read_source(spark, make_cfg(p))
    assert clean_rows(data) == [("a", 2, 1, 0, "k"), ("a", 3, 2, 253_402_300_799_999, "k")]
    assert reasons(data) == {0: "arrival_time_before_1970", 1: "event_time_before_1970"}


def test_csv_strings_iso_and_epoch_ms_and_quarantine(spark, tmp_path):
    d = tmp_path / "csv"
    d.mkdir()
    (d / "log.csv").write_text(
        "partition,pos,ingested,happened,user,value\n"
        f"p0,0,{BASE},{BASE - 10},u1,5\n"
        "p0,1,2023-11-14T22:13:21.123456Z,2023-11-14T22:13:20.5Z,u2,6\n"
        f"p0,2,{BASE + 3000},yesterday,u1,7\n"
        f"p0,3,{BASE + 4000},,u1,8\n"
        f"p0,x4,{BASE + 5000},{BASE},u1,9\n"
        f"p0,5,{BASE + 6000},{BASE},,10\n"
        f",6,{BASE + 7000},{BASE},u1,11\n"
        f"p0,,{BASE + 8000},{BASE},u1,12\n"
        f"p0,9,,{BASE},u1,13\n"
        f"p0,10,soon,{BASE},u1,14\n")
    cfg = make_cfg(d, fmt="csv", source={"columns": {"split": "partition", "offset": "pos",
                                                     "arrival_time": "ingested", "event_time": "happened",
                                                     "key": "user"}})
    data = read_source(spark, cfg)
    iso_arrival = int(dt.datetime(2023, 11, 14, 22, 13, 21, 123000, tzinfo=UTC).timestamp() * 1000)
    iso_event = int(dt.datetime(2023, 11, 14, 22, 13, 20, 500000, tzinfo=UTC).timestamp() * 1000)
    assert clean_rows(data) == sorted([("p0", 0, BASE, BASE - 10, "u1"), ("p0", 1, iso_arrival, iso_event, "u2")])
    q = {r["pos"]: r["reason"] for r in data.quarantine.collect()}
    assert q == {"2": "bad_event_time", "3": "missing_event_time", "x4": "bad_offset", "5": "missing_key",
                 "6": "missing_split", None: "missing_offset", "9": "missing_arrival_time",
                 "10": "bad_arrival_time"}
    # The quarantine keeps every column as read (strings for CSV) plus the reason.
    assert data.quarantine.columns == ["partition", "pos", "ingested", "happened", "user", "value", "reason"]
    row = data.quarantine.filter(F.col("pos") == "2").first()
    assert (row["happened"], row["value"]) == ("yesterday", "7")
    assert (data.rows_read, data.clean_rows, data.quarantined_rows, data.skipped_rows) == (10, 2, 8, 0)
    # Payload columns keep their names; the roles get the engine's names.
    assert data.rows.columns == ["split", "offset", "arrival_time", "event_time", "key", "value"]


def test_undeclared_split_duplicates_and_declared_splits(spark, tmp_path):
    p = write_parquet(tmp_path / "d", {
        "split": ["p0", "p0", "p0", "p1", "zz"], "offset": [0, 1, 1, 0, 0],
        "arrival_time": [BASE, BASE + 20, BASE + 10, BASE + 5, BASE + 6],
        "event_time": [BASE, BASE, BASE, BASE, BASE], "key": ["k", "k", "k", "k", "k"],
        "value": [1, 2, 3, 4, 5]})
    cfg = make_cfg(p, source={"splits": ["p0", "p1", "p2"], "side_inputs": ["rules"]})
    data = read_source(spark, cfg)
    q = sorted((r["split"], r["offset"], r["value"], r["reason"]) for r in data.quarantine.collect())
    # Of the two rows at (p0, 1) the first in arrival order is kept, the other is quarantined.
    assert q == [("p0", 1, 2, "duplicate_offset"), ("zz", 0, 5, "undeclared_split")]
    kept = {(r["split"], r["offset"]): r["value"] for r in data.rows.collect()}
    assert kept == {("p0", 0): 1, ("p0", 1): 3, ("p1", 0): 4}
    # Declared = listed splits (p2 has no rows) + side inputs, sorted.
    assert data.splits == ["p0", "p1", "p2", "rules"]
    # Without a list, the declared splits are those seen (clean) plus the side inputs.
    data2 = read_source(spark, make_cfg(p, source={"side_inputs": ["rules"]}))
    assert data2.splits == ["p0", "p1", "rules", "zz"]


def test_duplicate_choice_does_not_depend_on_input_order(spark, tmp_path):
    cols = {"split": ["a", "a", "a"], "offset": [7, 7, 7], "arrival_time": [BASE, BASE, BASE],
            "event_time": [BASE, BASE, BASE], "key": ["k", "k", "k"], "value": [3, 1, 2]}
    kept = []
    for perm in ([0, 1, 2], [2, 1, 0], [1, 2, 0]):
        p = write_parquet(tmp_path / f"perm{''.join(map(str, perm))}",
                          {c: [v[i] for i in perm] for c, v in cols.items()})
        data = read_source(spark, make_cfg(p))
        kept.append([r["value"] for r in data.rows.collect()])
        assert data.quarantined_rows == 2
    assert kept == [[1], [1], [1]]


def test_replay_range_skips_rows_outside(spark, tmp_path):
    p = write_parquet(tmp_path / "r", {
        "split": ["a"] * 5, "offset": [0, 1, 2, 3, 4],
        "arrival_time": [BASE, BASE + 100, BASE + 200, BASE + 300, BASE + 400],
        "event_time": [BASE] * 4 + [None], "key": ["k"] * 5})
    data = read_source(spark, make_cfg(p, replay={"start": BASE + 100, "end": BASE + 300}))
    assert [r[1] for r in clean_rows(data)] == [1, 2]  # [start, end): the row at end is out
    # Out of range rows are skipped even when they are bad (they belong to another partition's replay).
    assert (data.rows_read, data.skipped_rows, data.quarantined_rows) == (5, 3, 0)
    assert (data.start_ms, data.end_ms) == (BASE + 100, BASE + 300)
    # Without an explicit end: end = the last clean arrival, and that row is included.
    data = read_source(spark, make_cfg(p, replay={"start": BASE + 100}))
    assert [r[1] for r in clean_rows(data)] == [1, 2, 3]
    assert (data.start_ms, data.end_ms, data.skipped_rows, data.quarantined_rows) == (BASE + 100, BASE + 300, 1, 1)
    # No range at all: nothing is skipped; the range spans the clean rows.
    data = read_source(spark, make_cfg(p))
    assert (data.start_ms, data.end_ms, data.skipped_rows) == (BASE, BASE + 300, 0)


def test_ingestion_time_takes_event_time_from_arrival(spark, tmp_path):
    p = write_parquet(tmp_path / "i", {
        "split": ["a", "a"], "offset": [0, 1], "arrival_time": [BASE, BASE + 50], "key": ["k", "k"]})
    data = read_source(spark, make_cfg(p, window={"time": "ingestion"}))
    assert clean_rows(data) == [("a", 0, BASE, BASE, "k"), ("a", 1, BASE + 50, BASE + 50, "k")]
    # With event time, the missing column is a config error naming the key.
    with pytest.raises(ConfigError) as exc:
        read_source(spark, make_cfg(p))
    assert exc.value.key == "source.columns.event_time"


def test_missing_source_path_is_a_config_error(spark, tmp_path):
    with pytest.raises(ConfigError) as exc:
        read_source(spark, make_cfg(tmp_path / "nothing-here"))
    assert exc.value.key == "source.path"


def _fake_engine_outputs(spark, data, marker: int):
    """Stand-ins for the engine's stages (contract.py shapes), so the writer is tested on its own."""
    firings = spark.createDataFrame(
        [("k", BASE, BASE + 10_000, 0, BASE + 9_999, "watermark", marker),
         ("k", BASE + 10_000, BASE + 20_000, 0, None, "end_of_input", 1)],
        "key string, window_start long, window_end long, fire_index int, fire_watermark long, "
        "fire_reason string, cnt long")
    late = data.rows.filter(F.col("offset") == 1).withColumn("late_watermark", F.lit(BASE + 12_345))
    watermarks = spark.createDataFrame(
        [(BASE, "split", "a", BASE - 1, False), (BASE, "stream", None, BASE - 1, False),
         (BASE + 200, "split", "b", POS_INF, False), (BASE + 400, "split", "a", None, True),
         (BASE + 600, "stream", None, NEG_INF + 1, False)],
        "replay_time long, scope string, split string, watermark long, idle boolean")
    return firings, late, watermarks


def test_write_outputs_columns_counts_and_atomic_replace(spark, tmp_path):
    p = write_parquet(tmp_path / "w", {
        "split": ["a", "a", "a", None], "offset": [0, 1, 2, 3],
        "arrival_time": pa.array([ts(BASE), ts(BASE + 1), ts(BASE + 2), ts(BASE + 3)], pa.timestamp("ms", "UTC")),
        "event_time": pa.array([ts(BASE)] * 4, pa.timestamp("ms", "UTC")), "key": ["k"] * 4, "value": [1, 2, 3, 4]})
    out = tmp_path / "out" / "replay"
    cfg = make_cfg(p, out=out)
    data = read_source(spark, cfg)
    summary = write_outputs(spark, cfg, data, *_fake_engine_outputs(spark, data, marker=111))
    assert sorted(os.listdir(out)) == ["counts", "late_events", "quarantine", "watermarks", "windows"]
    assert sorted(os.listdir(out.parent)) == ["replay"]  # no staging left behind
    for name in ("counts", "late_events", "quarantine", "watermarks", "windows"):
        assert len([f for f in os.listdir(out / name) if f.endswith(".parquet")]) == 1

    win = spark.read.parquet(str(out / "windows"))
    assert win.columns == ["key", "window_start", "window_end", "fire_index", "fire_watermark", "fire_reason", "cnt",
                           "fire_watermark_ms"]
    assert dict(win.dtypes)["window_start"] == "timestamp" and dict(win.dtypes)["fire_watermark"] == "timestamp"
    ms = sorted(tuple(r) for r in win.select(F.unix_millis("window_start"), F.unix_millis("window_end"),
                                             F.unix_millis("fire_watermark")).collect())
    assert ms == [(BASE, BASE + 10_000, BASE + 9_999), (BASE + 10_000, BASE + 20_000, None)]
    assert spark.read.parquet(str(out / "windows")).filter(F.col("fire_watermark").isNull()).count() == 1

    late = spark.read.parquet(str(out / "late_events"))
    assert late.columns == ["split", "offset", "arrival_time", "event_time", "key", "value", "late_watermark",
                            "late_watermark_ms"]
    assert dict(late.dtypes)["arrival_time"] == "timestamp"  # as the source had it
    assert dict(late.dtypes)["late_watermark"] == "timestamp"

    wm = spark.read.parquet(str(out / "watermarks"))
    assert wm.columns[:5] == ["replay_time", "scope", "split", "watermark", "idle"]
    rows = wm.orderBy("replay_time_ms", "scope", "split").collect()
    by = {(r["replay_time_ms"], r["scope"], r["split"]): r for r in rows}
    assert by[(BASE + 200, "split", "b")]["watermark"] is None  # +inf has no timestamp...
    assert by[(BASE + 200, "split", "b")]["watermark_ms"] == POS_INF  # ...but the exact value is kept
    assert by[(BASE + 400, "split", "a")]["idle"] is True

    q = spark.read.parquet(str(out / "quarantine"))
    assert q.columns == ["split", "offset", "arrival_time", "event_time", "key", "value", "reason"]
    assert [r["reason"] for r in q.collect()] == ["missing_split"]

    counts = spark.read.parquet(str(out / "counts")).collect()
    assert [r.asDict() for r in counts] == [{"rows_read": 4, "rows_in_windows": 2, "late_rows": 1,
                                            "quarantined_rows": 1, "skipped_rows": 0, "filtered_rows": 0}]
    assert (summary.rows_read, summary.firings, summary.late_rows) == (4, 2, 1)

    # A rerun replaces the previous output as a whole.
    data = read_source(spark, cfg)
    write_outputs(spark, cfg, data, *_fake_engine_outputs(spark, data, marker=222))
    assert sorted(r["cnt"] for r in spark.read.parquet(str(out / "windows")).collect()) == [1, 222]
    assert sorted(os.listdir(out.parent)) == ["replay"]

    # A failure while writing leaves the previous output untouched and removes the staging directory.
    data = read_source(spark, cfg)
    firings, late, watermarks = _fake_engine_outputs(spark, data, marker=333)
    broken = watermarks.withColumn("watermark", F.expr("raise_error('boom')").cast("long"))
    with pytest.raises(Exception):
        write_outputs(spark, cfg, data, firings, late, broken)
    assert sorted(r["cnt"] for r in spark.read.parquet(str(out / "windows")).collect()) == [1, 222]
    assert sorted(os.listdir(out.parent)) == ["replay"]


def test_payload_column_with_a_reserved_name_is_refused(spark, tmp_path):
    p = write_parquet(tmp_path / "res", {
        "partition": ["a"], "offset": [0], "arrival_time": [BASE], "event_time": [BASE], "key": ["k"],
        "split": ["oops"]})
    with pytest.raises(ConfigError) as exc:
        prepare_source(spark.read.parquet(str(p)), make_cfg(p, source={"columns": {"split": "partition"}}))
    assert exc.value.key == "source.columns"
