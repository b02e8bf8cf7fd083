"""Explaining each difference (compare/explain.py): rows assigned to the compared windows of their key as the
window assigner does (tumbling with an offset, sliding, sessions by overlap), the idle spans of each split on the
replay clock, times as text, and the explanation of a window the replay fired alone because late rows were dropped
in the live job. End to end with a Flink live side: test_run.py."""
from __future__ import annotations

import pytest
from pyspark.sql import functions as F
from pyspark.sql import types as T

from compare_frames import S, T0, cfg, frames
from event_replay.compare.classify import classify_windows
from event_replay.compare.evidence import idle_spans, with_windows
from event_replay.compare.explain import explain
from event_replay.compare.wording import fmt_ms
from event_replay.compare.matching import match_windows
from event_replay.compare.replay_side import Scope
from event_replay.compare.rules import rules_for
from event_replay.semantics.config import parse_config
from event_replay.semantics.durations import NEG_INF, POS_INF
from event_replay.semantics.windows import assign

pytestmark = pytest.mark.spark

TIMES = [0, 1, 2_999, 3_000, 7_500, 9_999, 10_000, 12_345]


def _window_cfg(window: dict):
    return parse_config({"source": {"path": "unused"}, "watermark": {"max_out_of_orderness": "1s"}, "window": window,
                         "aggregations": {"cnt": "count(*)"}, "output": {"path": "unused"}})


@pytest.mark.parametrize("window", [{"type": "tumbling", "size": "5s", "offset": "3s"},
                                    {"type": "sliding", "size": "10s", "slide": "3s"}])
def test_rows_go_to_the_windows_the_assigner_gives(spark, window):
    c = _window_cfg(window)
    every = sorted({w for t in TIMES for w in assign(t, c.window)})
    windows = spark.createDataFrame([("k", s, e) for s, e in every[::2]], "key string, window_start_ms long, "
                                    "window_end_ms long")  # every other window compared: the rest are not joined
    rows = spark.createDataFrame([("k", t) for t in TIMES] + [("other", 0)], "key string, t long")
    got = sorted(tuple(r) for r in with_windows(rows, "t", c, windows)
                 .select("key", "t", "window_start_ms", "window_end_ms").collect())
    compared = set(every[::2])
    assert got == sorted(("k", t, s, e) for t in TIMES for s, e in assign(t, c.window) if (s, e) in compared)


def test_session_rows_join_the_windows_they_would_overlap(spark):
    c = _window_cfg({"type": "session", "gap": "2s"})
    windows = spark.createDataFrame([("k", 10_000, 15_000), ("j", 10_000, 15_000)],
                                    "key string, window_start_ms long, window_end_ms long")
    rows = spark.createDataFrame([("k", t) for t in (7_999, 8_000, 8_001, 14_999, 15_000)], "key string, t long")
    got = sorted(r["t"] for r in with_windows(rows, "t", c, windows).collect())
    assert got == [8_001, 14_999]  # [t, t + 2 s) meets [10 s, 15 s)


def test_idle_spans_per_split_on_the_replay_clock(spark):
    wm = spark.createDataFrame([
        ("split", "p0", False, 100, 1_000), ("split", "p0", True, 100, 2_000), ("split", "p0", True, 100, 2_500),
        ("split", "p0", False, 900, 4_000), ("split", "p0", True, 900, 6_000),
        ("split", "p1", False, 50, 1_000), ("stream", None, True, 50, 7_000)],
        "scope string, split string, idle boolean, watermark_ms long, replay_time_ms long")
    assert sorted(tuple(r) for r in idle_spans(wm).collect()) == [("p0", 2_000, 2_500), ("p0", 6_000, None)]


def test_times_as_text(spark):
    df = spark.createDataFrame([(T0 + 1_234,), (None,), (POS_INF,), (NEG_INF,)], "t long")
    assert [r[0] for r in df.select(fmt_ms(F.col("t"))).collect()] == \
        ["2024-01-01 00:00:01.234", "?", "+inf", "-inf"]


def test_differences_are_explained_by_the_replay_s_late_rows_or_their_absence(spark):
    c = cfg()
    aggs = ["cnt", "total"]
    replay, live = frames(spark, [("a", 0, 0, "watermark", 2, 5), ("a", 1, 0, "watermark", 1, 1)],
                          [("a", 0, 2, 5, None, None), ("a", 1, 2, 3, None, None), ("c", 3, 1, 1, None, None)])
    rules = rules_for(c.aggregations, {"cnt": T.LongType(), "total": T.LongType()}, aggs)
    classified = classify_windows(match_windows(replay, live, rules, frozenset(), False), aggs, Scope(), False)
    late = spark.createDataFrame([("a", T0 + S + 5, "p1", T0 + 2 * S + 1)],
                                 "key string, time_ms long, split string, late_watermark_ms long")
    no_wm = spark.createDataFrame([], "scope string, split string, idle boolean, watermark_ms long, "
                                      "replay_time_ms long")
    ex = explain(spark, c, classified, late, no_wm, None, aggs, frozenset(), use_source=False)
    got = {r["key"]: r for r in ex.windows.collect()}
    assert set(got) == {"a", "c"} and ex.count_agg == "cnt"  # the equal window a/0 is not explained
    a, only_live = got["a"], got["c"]
    assert (a["class"], a["count_delta"], a["replay_late_n"], a["replay_late_splits"]) == ("value_differs", 1, 1, "p1")
    assert a["explanation"] == ("the live count is higher by exactly the 1 row the replay dropped as late (watermark "
                                "2024-01-01 00:00:20.001): the live job's watermark was behind the replay's when "
                                "they arrived")
    assert only_live["class"] == "live_only" and only_live["explanation"].startswith(
        "the replay has no such window and no late row of it")
    equal = explain(spark, c, classified.where("class = 'equal'"), late, no_wm, None, aggs, frozenset(),
                    use_source=False)
    assert equal.windows.count() == 0 and equal.hints == []  # nothing to explain
