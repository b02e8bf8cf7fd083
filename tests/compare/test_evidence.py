"""The replay's evidence per compared window (compare/evidence.py): its late rows, the rows late on one side only,
which split held the stream at the first firing, and the splits that went idle just before it. (Rows to windows
and the idle spans themselves: test_explain.py.)"""
from __future__ import annotations

import pytest

from compare_frames import S, T0, cfg
from event_replay.compare.evidence import fired_by, idle_evidence, late_evidence, late_match_evidence

pytestmark = pytest.mark.spark

WIN = "key string, window_start_ms long, window_end_ms long"


def _diff(spark):
    return spark.createDataFrame([("k", T0, T0 + S), ("j", T0, T0 + S)], WIN)


def test_late_rows_per_window(spark):
    late = spark.createDataFrame([
        ("k", T0 + 1_000, "p1", T0 + 12_000), ("k", T0 + 2_000, "p2", T0 + 11_000), ("k", T0 + 9_999, "p1", T0 + 13_000),
        ("k", T0 + 15_000, "p1", T0 + 30_000),  # its window is not compared
        ("x", T0 + 1_000, "p3", T0 + 12_000)],  # nor its key's
        "key string, time_ms long, split string, late_watermark_ms long")
    got = [r.asDict() for r in late_evidence(late, cfg(), _diff(spark)).collect()]
    assert got == [dict(key="k", window_start_ms=T0, window_end_ms=T0 + S, replay_late_n=3,
                        replay_late_wm=T0 + 11_000, replay_late_splits="p1,p2")]


def test_rows_late_on_one_side_only(spark):
    lm = spark.createDataFrame([
        ("k", T0 + 1_000, 2, 0, T0), ("k", T0 + 3_000, 0, 1, T0), ("k", T0 + 4_000, 0, 0, T0),
        ("j", T0 + 5_000, 0, 0, T0)],  # matched on both sides only: no evidence for j
        "key string, time_ms long, replay_only long, live_only long, late_watermark_ms long")
    got = [r.asDict() for r in late_match_evidence(lm, cfg(), _diff(spark)).collect()]
    assert got == [dict(key="k", window_start_ms=T0, window_end_ms=T0 + S, late_replay_only_n=2, late_live_only_n=1)]


def test_the_split_that_held_the_stream_at_the_first_firing(spark):
    wm = spark.createDataFrame([
        ("split", "p1", False, 1_000, 100), ("split", "p1", False, 2_000, 300),
        ("split", "p2", False, 5_000, 100), ("split", "p2", False, 6_000, 400),
        ("stream", None, False, 1_000, 100), ("stream", None, False, 2_000, 300), ("stream", None, False, 2_000, 450)],
        "scope string, split string, idle boolean, watermark_ms long, replay_time_ms long")
    diff = spark.createDataFrame([("a", 0, 10, 2_000), ("b", 0, 10, 1_000), ("c", 0, 10, 9_999), ("d", 0, 10, None)],
                                 WIN + ", replay_first_watermark_ms long")
    got = {r.key: (r.held_by, r.replay_fire_time_ms) for r in fired_by(wm, diff).collect()}
    assert got == {"a": ("p1", 300), "b": ("p1", 100), "c": (None, None)}


def test_splits_idle_just_before_the_firing(spark):
    c = cfg().with_overrides(watermark={"idle_timeout": "30s", "interval": "1s"})  # reach 33 s
    fire = T0 + 100_000
    spans = spark.createDataFrame([
        ("p1", fire, None), ("p2", fire - 33_000, fire - 1), ("p3", fire - 33_001, None), ("p4", fire + 1, None)],
        "split string, idle_from long, idle_to long")
    fired = spark.createDataFrame([("k", T0, T0 + S, fire), ("j", T0, T0 + S, None)],
                                  WIN + ", replay_fire_time_ms long")
    got = [r.asDict() for r in idle_evidence(spans, fired, c).collect()]
    assert got == [dict(key="k", window_start_ms=T0, window_end_ms=T0 + S,
                        idle_before="p1 at 2024-01-01 00:01:40.000, p2 at 2024-01-01 00:01:07.000")]
    none = idle_evidence(spans, fired, cfg())  # no idle timeout: no evidence, same columns
    assert none.columns == ["key", "window_start_ms", "window_end_ms", "idle_before"] and none.count() == 0
