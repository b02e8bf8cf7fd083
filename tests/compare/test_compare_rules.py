"""The exactness rules of `replay compare` (compare/rules.py): exact per aggregate unless a floating sum's summation
order is unknown, the tolerance bounded and applied only where the rule has one."""
from __future__ import annotations

import pytest

from event_replay.compare.live_spec import CompareInputError

pytestmark = pytest.mark.spark


def test_rules_per_aggregate():
    from pyspark.sql import types as T

    from event_replay.compare.rules import rules_for

    aggs = {"cnt": "count(*)", "total": "sum(value)", "avg_v": "avg(value)", "hi": "max(v)", "d": "sum(d)"}
    types = {"cnt": T.LongType(), "total": T.LongType(), "avg_v": T.DoubleType(), "hi": T.DoubleType(),
             "d": T.DecimalType(20, 2)}
    rules = {r.aggregate: r for r in rules_for(aggs, types, list(aggs))}
    assert [rules[a].exact for a in aggs] == [True, True, False, True, True]
    assert "summation order is unknown" in rules["avg_v"].why and rules["avg_v"].tolerance == 1e-9
    known = {r.aggregate: r for r in rules_for(aggs, types, list(aggs), summation_order="known")}
    assert all(r.exact for r in known.values())
    with pytest.raises(CompareInputError, match="--float-tolerance"):
        rules_for(aggs, types, list(aggs), tolerance=2.0)


def test_tolerance_only_for_floating_sums(spark):
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from event_replay.compare.rules import rules_for, equal

    (tol,) = rules_for({"s": "sum(x)"}, {"s": T.DoubleType()}, ["s"])
    (exact,) = rules_for({"n": "count(*)"}, {"n": T.LongType()}, ["n"])
    df = spark.createDataFrame([(0.1 + 0.2, 0.3, 3, 3), (1e12 + 1e-3, 1e12, 5, 6), (None, None, None, 1),
                                (1.0, 1.001, 7, 7)], "a double, b double, m long, n long")
    got = df.select(equal(tol, F.col("a"), F.col("b")).alias("t"), equal(exact, F.col("m"), F.col("n")).alias("e"))
    assert [tuple(r) for r in got.collect()] == [(True, True), (True, False), (True, False), (False, True)]
