"""engine/elements.py: the saturating cleanup time, the one-call check that routes an aggregate, and the firing
elements' aggregates over each window's prefix (running and joined paths agree with a brute-force sum)."""
from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from event_replay.engine.contract import POS_INF
from event_replay.engine.elements import POS, WE, WS, cleanup, firings_with_aggregates, single_call


@pytest.mark.parametrize("text, one", [("sum(x)", True), ("count(*)", True), ("sum(x) / count(*)", False),
                                       ("max(abs(x))", True), ("max(x) + 1", False), ("f(g(x), h(y))", True),
                                       ("sum(x", False)])
def test_single_call(text, one):
    assert single_call(text) is one


@pytest.mark.spark
def test_cleanup_adds_the_lateness_and_saturates_at_plus_infinity(spark):
    df = spark.createDataFrame([(5,), (POS_INF - 10,), (POS_INF - 3,), (POS_INF,)], "m long")
    assert [r[0] for r in df.select(cleanup(F.col("m"), 5)).collect()] == [10, POS_INF - 5, POS_INF, POS_INF]
    assert [r[0] for r in df.select(cleanup(F.col("m"), 0)).collect()] == [5, POS_INF - 10, POS_INF - 3, POS_INF]


@pytest.mark.spark
def test_each_firing_aggregates_its_windows_elements_up_to_it(spark):
    # window (k, 0, 10): elements 1..4, firings at 2 and 4; window (k, 10, 20): one element that fires.
    rows = [("k", 0, 10, 1, 1, None), ("k", 0, 10, 2, 2, "timer"), ("k", 0, 10, 3, 4, None),
            ("k", 0, 10, 4, 8, "late_row"), ("k", 10, 20, 1, 100, "timer")]
    elems = spark.createDataFrame(
        [(k, ws, we, pos, x, x, reason, None if reason is None else pos - 1, 0 if reason else None)
         for k, ws, we, pos, x, reason in rows],
        f"key string, {WS} long, {WE} long, {POS} long, x long, arrival_time long, fire_reason string, "
        "fire_index int, fire_watermark long")
    aggs = {"total": "sum(x)", "mean": "sum(x) / count(*)", "distinct": "count(DISTINCT x)"}  # running + joined
    got = {(r[WS], r[POS]): (r["total"], r["mean"], r["distinct"])
           for r in firings_with_aggregates(elems, ["key", WS, WE], [POS], aggs).collect()}
    assert got == {(0, 2): (3, 1.5, 2), (0, 4): (15, 3.75, 4), (10, 1): (100, 100.0, 1)}
