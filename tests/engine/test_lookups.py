"""lookups: sorted driver tables looked up by a column in the engine's extension (SortedLookup.java), against a
brute-force search. Ceiling (the timer firings' smallest stream value >= q): ties, queries before and past every
value, values spread unevenly, -inf and +inf among the values, no value at all, null queries. Floor (the rows'
stream watermark before their tick): equal keys, a default below the first key, a default that is not a long
sentinel."""
from __future__ import annotations

import random

import numpy as np
import pytest
from pyspark.sql import functions as F

from event_replay.engine import lookups
from event_replay.engine.contract import NEG_INF, POS_INF
from event_replay.engine.windows.fire_lookup import ValueLookup

pytestmark = pytest.mark.spark


def _ceilings(spark, values: list[int], queries: list[int | None]):
    """The fire lookup over `values` as the driver's timeline has them, against a brute-force search."""
    firings = spark.createDataFrame([(i, q) for i, q in enumerate(queries)], "i long, __q long")
    looked_up = ValueLookup(np.array(sorted(values), dtype=np.int64)).looked_up(firings)
    got = {r["i"]: r["__v"] for r in looked_up.collect()}
    want = {i: None if q is None else min((v for v in values if v >= q and v != NEG_INF), default=None)
            for i, q in enumerate(queries)}
    assert got == want


def test_ceilings_match_a_brute_force_search(spark):
    rnd = random.Random(2)
    values = sorted({rnd.randint(0, 400) for _ in range(60)} | {rnd.randint(10_000, 10_050) for _ in range(5)})
    queries = [rnd.randint(-500, 11_000) for _ in range(200)] + values[:10] + [None, -(2**62), 2**62]
    _ceilings(spark, values, queries)


def test_infinite_values_and_none(spark):
    _ceilings(spark, [NEG_INF, 5, 7, POS_INF], [-3, 5, 6, 8, 10**15, None])  # +inf answers everything above 7
    _ceilings(spark, [NEG_INF], [0, 100])  # -inf is never >= a timer
    _ceilings(spark, [], [0, None])
    _ceilings(spark, [POS_INF], [0])


@pytest.mark.parametrize("default", [NEG_INF, 0, -7])
def test_floors_match_a_brute_force_search(spark, default):
    rnd = random.Random(default)
    keys = sorted(rnd.randint(-50, 400) for _ in range(80)) + [500, 500, 500]  # equal keys: the last one counts
    values = [rnd.randint(-10**12, 10**12) for _ in keys]
    xs = [rnd.randint(-100, 600) for _ in range(300)] + keys[:5] + [NEG_INF, POS_INF, None]
    df = spark.createDataFrame([(i, x) for i, x in enumerate(xs)], "i long, x long")
    col = lookups.floor_value(spark, np.array(keys), np.array(values), F.col("x"), default)
    out = df.select("i", col.alias("v"))
    assert not out.schema["v"].nullable
    got = {r["i"]: r["v"] for r in out.collect()}
    want = {}
    for i, x in enumerate(xs):
        at = [j for j, k in enumerate(keys) if x is not None and k <= x]
        want[i] = values[at[-1]] if at else default
    assert got == want


def test_lookups_cost_no_spark_job_and_no_join(spark):
    sc = spark.sparkContext
    sc.setJobGroup("lookups", "lookups")
    try:
        df = spark.range(100).select(F.col("id").alias("x"))
        out = df.select(lookups.ceiling_value(spark, np.arange(0, 200, 3), F.col("x")).alias("c"),
                        lookups.floor_value(spark, np.arange(0, 200, 3), np.arange(67), F.col("x"), 0).alias("f"))
        assert sc.statusTracker().getJobIdsForGroup("lookups") == []  # building the lookups started nothing
        assert "Join" not in out._jdf.queryExecution().executedPlan().toString()
        assert out.where("c - x between 0 and 2 and f = x div 3").count() == 100
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)


def test_none_without_the_extension(spark, monkeypatch):
    monkeypatch.setattr(lookups, "extension_class", lambda spark, name: None)
    assert not lookups.available(spark)
    assert lookups.ceiling_value(spark, np.arange(3), F.col("x")) is None
    assert lookups.floor_value(spark, np.arange(3), np.arange(3), F.col("x"), 0) is None


def test_repeated_queries_in_one_task(spark):
    """Rows come in runs of one tick: the lookup keeps its last answer. Runs, alternations, nulls between equal
    queries and a ceiling with no answer between answered ones all give each row its own answer (one partition)."""
    keys, values = [10, 20, 30], [1, 2, 3]
    xs = [15, 15, 15, None, 15, 25, 15, 25, 40, 40, 5, 5, None, None, 35, 10, 10]
    df = spark.createDataFrame([(i, x) for i, x in enumerate(xs)], "i long, x long").coalesce(1)
    floor = lookups.floor_value(spark, np.array(keys), np.array(values), F.col("x"), -1)
    ceiling = lookups.ceiling_value(spark, np.array(keys), F.col("x"))
    got = [(r["f"], r["c"]) for r in df.select("i", floor.alias("f"), ceiling.alias("c")).orderBy("i").collect()]
    want = [(max((v for k, v in zip(keys, values) if x is not None and k <= x), default=-1),
             None if x is None else min((k for k in keys if k >= x), default=None)) for x in xs]
    assert got == want
