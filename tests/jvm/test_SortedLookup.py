"""SortedLookup.java: a sorted driver table looked up per row by binary search (FLOOR: the value at the largest key
at or below x, else the default; CEILING: the smallest key at or above x, else null)."""
from __future__ import annotations

import numpy as np
import pytest
from pyspark.sql.classic.column import Column
from pyspark.sql.types import LongType, StructField, StructType

pytestmark = pytest.mark.spark

MIN, MAX = -2 ** 63, 2 ** 63 - 1


def _bytes(values) -> bytes:
    return np.asarray(values, dtype="<i8").tobytes()


def _xs(spark, xs):
    schema = StructType([StructField("i", LongType(), False), StructField("x", LongType(), True)])
    return spark.createDataFrame(list(enumerate(xs)), schema).coalesce(1)


def _looked_up(java, xs, column_of):
    df = _xs(java.spark, xs)
    out = df.select("i", Column(column_of(df["x"]._jc)).alias("y")).orderBy("i")
    return out, [r.y for r in out.collect()]


@pytest.mark.parametrize("x, below, above", [
    (MIN, -1, 0), (9, -1, 0), (10, 0, 0), (15, 0, 1), (20, 2, 1), (29, 2, 3), (30, 3, 3), (31, 3, 4), (MAX, 3, 4),
])
def test_the_searches_on_ties_and_bounds(java, x, below, above):
    keys = java.longs([10, 20, 20, 30])  # two equal keys: below takes the last, above the first
    assert java.call("SortedLookup", "lastAtOrBelow", keys, x) == below
    assert java.call("SortedLookup", "firstAtOrAbove", keys, x) == above


def test_the_searches_of_an_empty_table(java):
    assert java.call("SortedLookup", "lastAtOrBelow", java.longs([]), 0) == -1
    assert java.call("SortedLookup", "firstAtOrAbove", java.longs([]), 0) == 0


def test_floor_is_the_value_at_the_last_key_at_or_below_else_the_default(java):
    lookup = java.jvm.io.eventreplay.spark.SortedLookup
    out, ys = _looked_up(java, [None, MIN, 9, 10, 19, 20, 25, MAX],
                         lambda x: lookup.floor(java.spark._jsparkSession, _bytes([10, 20, 20]), _bytes([1, 2, 3]),
                                                -7, x))
    assert ys == [-7, -7, -7, 1, 1, 3, 3, 3]
    assert out.schema["y"].nullable is False  # the default stands for null x too


def test_ceiling_is_the_first_key_at_or_above_else_null(java):
    lookup = java.jvm.io.eventreplay.spark.SortedLookup
    _, ys = _looked_up(java, [None, MIN, 10, 11, 20, 21, MAX],
                       lambda x: lookup.ceiling(java.spark._jsparkSession, _bytes([10, 20, 20]), x))
    assert ys == [None, 10, 10, 20, 20, None, None]


def test_an_empty_table_floors_to_the_default_and_ceils_to_null(java):
    lookup = java.jvm.io.eventreplay.spark.SortedLookup
    _, floors = _looked_up(java, [None, 0, 5],
                           lambda x: lookup.floor(java.spark._jsparkSession, b"", b"", 4, x))
    _, ceilings = _looked_up(java, [None, 0, 5], lambda x: lookup.ceiling(java.spark._jsparkSession, b"", x))
    assert floors == [4, 4, 4] and ceilings == [None, None, None]


def test_repeated_and_alternating_xs_get_their_own_answers(java):
    """The last answer is reused for the same x only (rows mostly repeat the tick of the row before)."""
    lookup = java.jvm.io.eventreplay.spark.SortedLookup
    _, ys = _looked_up(java, [15, 15, 25, 15, None, 15, 5],
                       lambda x: lookup.floor(java.spark._jsparkSession, _bytes([10, 20]), _bytes([100, 200]), 0, x))
    assert ys == [100, 100, 200, 100, 0, 100, 0]


def test_bad_tables_are_refused_when_the_column_is_made(java):
    lookup = java.jvm.io.eventreplay.spark.SortedLookup
    session = java.spark._jsparkSession
    x = java.spark.range(1)["id"]._jc
    with pytest.raises(Exception, match="keys must be ascending: 20 then 10"):
        lookup.ceiling(session, _bytes([20, 10]), x)
    with pytest.raises(Exception, match="keys must be ascending: 20 then 10"):
        lookup.floor(session, _bytes([20, 10]), _bytes([1, 2]), 0, x)
    with pytest.raises(Exception, match="2 keys but 1 values"):
        lookup.floor(session, _bytes([10, 20]), _bytes([1]), 0, x)
    with pytest.raises(Exception, match="int64 bytes expected, got 7 bytes"):
        lookup.ceiling(session, b"\0" * 7, x)
