"""Stage 2 (windows) of the Spark engine in isolation: fed the reference model's own `wm_before` per row and stream
values, its firings and late rows must equal the reference model's (SEMANTICS §5–6)."""
from __future__ import annotations

import json
import math
from typing import Any, Iterable, Mapping

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql import functions as F
from pyspark.sql import types as T

from event_replay.engine.windows import compute_windows
from event_replay.semantics.config import parse_config, to_raw
from event_replay.semantics.durations import NEG_INF
from event_replay.semantics.model import LogRow
from event_replay.semantics.reference import replay
from strategies import cases, config


ROW_SCHEMA = T.StructType([
    T.StructField("split", T.StringType()), T.StructField("offset", T.LongType()),
    T.StructField("arrival_time", T.LongType()), T.StructField("event_time", T.LongType()),
    T.StructField("key", T.StringType()), T.StructField("value", T.LongType()),
    T.StructField("wm_before", T.LongType()),
])

KEEP_NULLS = {"ignoreNullFields": "false"}

# Aggregates the reference model cannot evaluate: checked against the rows each reference firing lists.
EXTRA_AGGS = {"spread": "max(value) - min(value)", "distinct_values": "count(DISTINCT value)"}


def _extra(rows: Iterable[LogRow]) -> dict[str, Any]:
    values = [r.payload["value"] for r in rows]
    return {"spread": max(values) - min(values), "distinct_values": len(set(values))}


def run_stage(spark, rows: list[LogRow], wm_before: Mapping[tuple[str, int], int], stream_values: list[int], cfg):
    data = [(r.split, r.offset, r.arrival_time, r.event_time, r.key, r.payload.get("value"),
             wm_before[(r.split, r.offset)]) for r in rows]
    rows_df = spark.createDataFrame(data, ROW_SCHEMA)
    values_df = spark.createDataFrame([(v,) for v in stream_values], "watermark long")
    firings, late = compute_windows(rows_df, values_df, cfg)
    assert firings.columns[:6] == ["key", "window_start", "window_end", "fire_index", "fire_watermark", "fire_reason"]
    assert dict(firings.dtypes)["fire_index"] == "int" and dict(firings.dtypes)["fire_watermark"] == "bigint"
    assert late.columns == [c for c in ROW_SCHEMA.fieldNames() if c != "wm_before"] + ["late_watermark"]
    # One query for both outputs (as JSON lines), so that Spark shares the work of the two.
    both = (firings.select(F.lit("f").alias("out"), F.to_json(F.struct(*firings.columns), KEEP_NULLS).alias("row"))
            .unionByName(late.select(F.lit("l").alias("out"), F.to_json(F.struct(*late.columns), KEEP_NULLS).alias("row"))))
    got = both.collect()
    return ([json.loads(r.row) for r in got if r.out == "f"], [json.loads(r.row) for r in got if r.out == "l"])


def firing_id(f: Mapping[str, Any]) -> tuple:
    return (f["key"], f["window_start"], f["window_end"], f["fire_index"])


def close(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-9)


def assert_same_as_reference(spark, rows: list[LogRow], cfg, declared=None, extra: bool = False):
    ref = replay(rows, cfg, declared_splits=declared)
    in_range = [r for r in rows if (r.split, r.offset) in ref.wm_before]
    stage_cfg = parse_config({**to_raw(cfg), "aggregations": {**cfg.aggregations, **EXTRA_AGGS}}) if extra else cfg
    got, late = run_stage(spark, in_range, ref.wm_before, ref.stream_values, stage_cfg)

    by_row = {(r.split, r.offset): r for r in in_range}
    want = {}
    for f in ref.firings:
        aggs = dict(f.aggregates)
        if extra:
            aggs.update(_extra(by_row[sr] for sr in f.rows))
        want[(f.key, f.window_start, f.window_end, f.fire_index)] = (f.fire_watermark, f.fire_reason, aggs)
    have = {firing_id(f): f for f in got}
    assert len(have) == len(got), "a firing appears twice"
    assert sorted(have, key=str) == sorted(want, key=str)
    for fid, (wm, reason, aggs) in want.items():
        f = have[fid]
        assert (f["fire_watermark"], f["fire_reason"]) == (wm, reason), fid
        for name, value in aggs.items():
            assert close(f[name], value), (fid, name, f[name], value)

    want_late = sorted((lr.row.split, lr.row.offset, lr.late_watermark) for lr in ref.late_rows)
    assert sorted((r["split"], r["offset"], r["late_watermark"]) for r in late) == want_late
    for r in late:  # every input column comes through
        src = by_row[(r["split"], r["offset"])]
        assert (r["arrival_time"], r["event_time"], r["key"], r["value"]) == \
               (src.arrival_time, src.event_time, src.key, src.payload["value"])
    return ref, got


def per_event_wm_before(rows: list[LogRow], lag: int) -> tuple[dict, list[int]]:
    """One split, per-event emission, by hand: the watermark after a row is max event time - lag."""
    wm, top, before, values = NEG_INF, None, {}, []
    for r in sorted(rows, key=LogRow.replay_order):
        before[(r.split, r.offset)] = wm
        top = r.event_time if top is None else max(top, r.event_time)
        if top - lag > wm:
            wm = top - lag
            values.append(wm)
    return before, values


# -- SEMANTICS §8 A, with wm_before built by hand ---------------------------------------------------------------

def test_example_a_by_hand(spark):
    cfg = config(watermark={"max_out_of_orderness": "5s", "emit": "per_event"},
                 window={"size": "10s", "allowed_lateness": "3s"},
                 aggregations={"cnt": "count(*)", "total": "sum(value)", "ratio": "sum(value) / count(*)"})
    times = [1000, 3000, 12000, 2000, 16000, 4000, 21000, 9000, 30000, 11000]
    rows = [LogRow("p0", i, i, t, "k", {"value": t // 1000}) for i, t in enumerate(times)]
    wm_before, values = per_event_wm_before(rows, 5001)
    assert wm_before[("p0", 3)] == 6999 and values[-1] == 24999
    got, late = run_stage(spark, rows, wm_before, values, cfg)
    assert sorted((f["key"], f["window_start"], f["window_end"], f["fire_index"], f["fire_watermark"],
                   f["fire_reason"], f["cnt"], f["total"], f["ratio"]) for f in got) == [
        ("k", 0, 10000, 0, 10999, "watermark", 3, 6, 2.0),
        ("k", 0, 10000, 1, 10999, "late_row", 4, 10, 2.5),
        ("k", 10000, 20000, 0, 24999, "watermark", 2, 28, 14.0),
        ("k", 20000, 30000, 0, None, "end_of_input", 1, 21, 21.0),
        ("k", 30000, 40000, 0, None, "end_of_input", 1, 30, 30.0),
    ]
    assert sorted((r["event_time"], r["late_watermark"]) for r in late) == [(9000, 15999), (11000, 24999)]

    # hold: the windows the flush fired stay open; nothing else changes.
    got, late = run_stage(spark, rows, wm_before, values, cfg.with_overrides(replay={"end_of_input": "hold"}))
    assert sorted((f["window_start"], f["fire_index"], f["fire_reason"]) for f in got) == [
        (0, 0, "watermark"), (0, 1, "late_row"), (10000, 0, "watermark")]
    assert len(late) == 2


def test_example_a_matches_reference(spark):
    cfg = config(watermark={"max_out_of_orderness": "5s", "emit": "per_event"},
                 window={"size": "10s", "allowed_lateness": "3s"},
                 aggregations={"cnt": "count(*)", "total": "sum(value)"})
    times = [1000, 3000, 12000, 2000, 16000, 4000, 21000, 9000, 30000, 11000]
    rows = [LogRow("p0", i, i, t, "k", {"value": t // 1000}) for i, t in enumerate(times)]
    assert_same_as_reference(spark, rows, cfg, extra=True)


def test_sliding_row_late_only_when_every_window_is(spark):
    cfg = config(watermark={"max_out_of_orderness": 0, "emit": "per_event"},
                 window={"type": "sliding", "size": 4000, "slide": 1000, "allowed_lateness": 500},
                 aggregations={"cnt": "count(*)", "total": "sum(value)"})
    times = [500, 2500, 9000, 6200, 4100, 3000, 12000, 8700, 400]
    rows = [LogRow("p0", i, 10 * i, t, "k" if i % 3 else "j", {"value": i}) for i, t in enumerate(times)]
    ref, got = assert_same_as_reference(spark, rows, cfg, extra=True)
    assert {f.fire_reason for f in ref.firings} >= {"watermark", "late_row", "end_of_input"}
    assert ref.late_rows  # the example exercises all three outcomes


def test_sessions_merge_refire_and_touch(spark):
    cfg = config(watermark={"max_out_of_orderness": 0, "emit": "per_event"},
                 window={"type": "session", "gap": 1000, "allowed_lateness": 5000},
                 aggregations={"cnt": "count(*)", "total": "sum(value)"})
    events = [0, 3000,  # [0,1000) fires at 2999
              500,  # grows to [0,1500): a new window, fires at once, index 0
              100,  # inside [0,1500): same bounds, index 1
              4000,  # touches [3000,4000): merged into [3000,5000)
              1500,  # touches [0,1500) and reaches [3000,5000)? no: [1500,2500) merges with [0,1500) only
              2500,  # bridges [0,2500) and [3000,5000): one window [0,5000)
              20000, 100]  # the watermark passed every cleanup: 100 is late
    rows = [LogRow("p0", i, i, t, "k", {"value": i}) for i, t in enumerate(events)]
    ref, got = assert_same_as_reference(spark, rows, cfg, extra=True)
    bounds = {(f.window_start, f.window_end) for f in ref.firings}
    assert {(0, 1000), (0, 1500), (0, 2500), (0, 5000)} <= bounds
    assert [lr.row.offset for lr in ref.late_rows] == [8]


def test_empty_input(spark):
    cfg = config(watermark={"max_out_of_orderness": 0}, window={"type": "session", "gap": 1000})
    got, late = run_stage(spark, [], {}, [], cfg)
    assert got == [] and late == []


# -- properties: random logs and configs against the reference model --------------------------------------------

def _with_window(cfg, wtype: str):
    raw = to_raw(cfg)
    old = raw["window"]
    window = {"type": wtype, "allowed_lateness": old["allowed_lateness"], "time": old["time"]}
    if wtype == "session":
        window["gap"] = old.get("gap") or old.get("size", 1000) // 4
    else:
        window["size"] = old.get("size") or 4000
        if wtype == "sliding":
            window["slide"] = window["size"] // 4
    raw["window"] = window
    return parse_config(raw)


@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=cases(), wtype=st.sampled_from(["tumbling", "sliding", "session"]), extra=st.booleans())
def test_same_as_reference(spark, case, wtype, extra):
    assert_same_as_reference(spark, list(case.rows), _with_window(case.cfg, wtype), case.declared_splits, extra)


# -- the two ways fixed windows fire -----------------------------------------------------------------------------

def test_combined_and_numbered_paths_agree(spark, monkeypatch):
    """Tumbling/sliding windows fire through one aggregate over each window's early rows combined with running
    aggregates over its late-accepted rows (merge.py) when every aggregate combines, by a hash join or, with many
    late rows, a sort-merge join; through numbered elements and running aggregates when they do not. Each way must
    give the reference's firings on the same rows, with windows that have early and late-accepted rows, and windows
    whose only rows are late-accepted."""
    from event_replay.engine.windows import fixed as fixed_windows

    # (event time, key) in arrival order; per-event watermark = max - 5001. After 16000 (watermark 10999) the
    # [0, 10s) windows are fired and accept rows until 12999: k gets two late firings, m only late-accepted rows.
    log = [(1000, "j"), (3000, "k"), (12000, "j"), (2000, "k"), (16000, "j"), (4000, "k"), (5000, "j"),
           (6000, "k"), (7000, "m"), (7500, "m"), (21000, "j"), (9000, "k"), (30000, "k"), (11000, "j"),
           (25000, "k"), (14000, "j"), (19500, "k")]
    rows = [LogRow("p0", i, i, t, key, {"value": t // 1000}) for i, (t, key) in enumerate(log)]
    for window in ({"size": "10s", "allowed_lateness": "3s"},
                   {"type": "sliding", "size": "10s", "slide": "5s", "allowed_lateness": "3s"}):
        cfg = config(watermark={"max_out_of_orderness": "5s", "emit": "per_event"}, window=window,
                     aggregations={"cnt": "count(*)", "total": "sum(value)", "top": "max(value)",
                                   "low": "min(value)", "n": "count(value)"})
        ref, _ = assert_same_as_reference(spark, rows, cfg)  # combined, hash join
        assert {f.fire_reason for f in ref.firings} >= {"watermark", "late_row"}
        assert any(f.fire_reason == "late_row" and f.fire_index >= 2 for f in ref.firings)  # several late firings
        assert any(f.key == "m" and f.fire_reason == "late_row" and f.fire_index == 1 for f in ref.firings)
        with monkeypatch.context() as m:
            m.setattr(fixed_windows, "_LATE_HASHED_MAX", -1)  # combined, sort-merge join
            assert_same_as_reference(spark, rows, cfg)
        with monkeypatch.context() as m:
            m.setattr(fixed_windows, "combiners", lambda frame, aggs: None)  # every window numbered
            assert_same_as_reference(spark, rows, cfg)


@pytest.mark.parametrize("walk", [True, False])
def test_fixed_firings_and_their_write_share_one_shuffle(spark, monkeypatch, walk):
    """Elements whose aggregate does not combine (a floating-point sum) are shuffled by key into the windows
    output's files before they fire, by the extension's walk or by numbered elements, so the write's repartition
    into those files is no second shuffle: what the windows write runs has one shuffle, into `partitions`. (The
    walk's shuffle is in the lineage of its RDD, below the plan's scan of it, so the RDDs are counted.) The walk's
    firings come in the output's order, so the write does not sort them again."""
    from event_replay.engine import fixed_plans
    from event_replay.engine.windows import fixed as fixed_windows
    from event_replay.io.output import WINDOWS_ORDER, arranged, windows_output

    fixed_plans(spark)  # what a replay runs with (engine.replay sets it)
    if not walk:
        monkeypatch.setattr(fixed_windows, "walked_firings", lambda *a: None)
    schema = T.StructType([f if f.name != "value" else T.StructField("value", T.DoubleType()) for f in ROW_SCHEMA])
    rows_df = spark.createDataFrame([("p0", i, i, 1000 * i, f"k{i % 3}", i / 10, -1) for i in range(30)], schema)
    cfg = config(watermark={"max_out_of_orderness": "5s", "emit": "per_event"}, window={"size": "10s", "allowed_lateness": "3s"},
                 aggregations={"total": "sum(value)"})
    firings, _ = compute_windows(rows_df, spark.createDataFrame([], "watermark long"), cfg, partitions=4)
    written = windows_output(arranged(firings, WINDOWS_ORDER, 4, "key"), cfg)._jdf.queryExecution()
    plan = written.executedPlan().toString()
    assert ("Window [" not in plan) == walk, plan
    assert ("Sort [" not in plan) == walk, plan
    lineage = written.toRdd().toDebugString()
    assert lineage.count("ShuffledRowRDD") == 1 and written.toRdd().getNumPartitions() == 4, lineage


def test_windows_are_computed_in_the_files_partitions_only_when_every_core_gets_one(spark):
    """At least as many windows files as cores: the windows are computed in the files' partitions (no shuffle of
    the write's own); fewer: in Spark's shuffle partitions (None), so no core idles in the windows' stage."""
    from dataclasses import replace

    from event_replay.engine.windows import windows_partitions

    cores = spark.sparkContext.defaultParallelism
    cfg = config(watermark={"max_out_of_orderness": "5s"}, window={"size": "10s"})
    with_files = lambda n: replace(cfg, output=replace(cfg.output, windows_files=n))  # noqa: E731
    assert windows_partitions(spark, with_files(cores)) == cores
    assert windows_partitions(spark, with_files(cores + 3)) == cores + 3
    assert cores > 1 and windows_partitions(spark, with_files(cores - 1)) is None
