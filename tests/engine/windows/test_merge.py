"""merge.combiner: which aggregates combine from two parts, and that the combined value equals the aggregate over
both parts, nulls included (a sum over nulls only is null; count(x) skips nulls; min/max skip nulls)."""
from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from event_replay.engine.windows.merge import combiner, combiners

SCHEMA = "part int, value long, price decimal(10,2), ratio double, name string"
ROWS = [(0, 5, "1.25", 0.5, "b"), (0, None, None, None, None), (1, -3, "2.50", 1.5, "a"), (1, 9, None, -0.0, "c"),
        (2, None, None, None, None)]


@pytest.fixture(scope="module")
def frame(spark):
    from decimal import Decimal
    rows = [(p, v, Decimal(d) if d else None, r, n) for p, v, d, r, n in ROWS]
    return spark.createDataFrame(rows, SCHEMA)


@pytest.mark.parametrize("expr", ["count(*)", "count(value)", "COUNT(ratio)", "sum(value)", "sum(price)",
                                  "min(value)", "max(value)", "min(name)", "max(price)", "sum(value * 2)"])
def test_combined_equals_the_aggregate_over_both_parts(frame, expr):
    combine = combiner(frame, expr)
    assert combine is not None
    def over(*parts):
        return frame.where(F.col("part").isin(*parts)).agg(F.expr(expr).alias("v"))

    for a, b in ((0, 1), (2, 1), (0, 2)):  # part 2 holds only nulls: on either side
        want = over(a, b)
        both = over(a).select(F.col("v").alias("a")).crossJoin(over(b).select(F.col("v").alias("b")))
        got = both.select(combine(F.col("a"), F.col("b")).alias("v"))
        assert got.schema["v"].dataType == want.schema["v"].dataType, expr
        assert got.collect()[0]["v"] == want.collect()[0]["v"], (expr, a, b)


@pytest.mark.parametrize("expr", ["sum(ratio)", "min(ratio)", "max(ratio)", "count(DISTINCT value)",
                                  "sum(distinct value)", "max(value) - min(value)", "avg(value)", "first(value)",
                                  "count(*) FILTER (WHERE value > 0)", "sum(nope)", "sum(value", "min(ALL value)"])
def test_what_does_not_combine(frame, expr):
    assert combiner(frame, expr) is None


def test_combiners_need_every_aggregate(frame):
    assert set(combiners(frame, {"n": "count(*)", "s": "sum(value)"})) == {"n", "s"}
    assert combiners(frame, {"n": "count(*)", "s": "sum(ratio)"}) is None
