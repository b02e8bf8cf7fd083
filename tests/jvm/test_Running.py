"""Running.java: count, sum, min and max over a window's elements so far, added one by one, as Spark evaluates a
running window aggregate (nulls skipped, sum null until a value, doubles ordered as Spark orders them, a long sum's
overflow an error under ANSI), and Running.Aggregate: which aggregates the walk takes and their result types."""
from __future__ import annotations

import math

import pytest
from pyspark.sql.types import DoubleType, IntegerType, LongType, StringType, StructField, StructType

pytestmark = pytest.mark.spark

MIN, MAX = -2 ** 63, 2 ** 63 - 1
SCHEMA = StructType([StructField("i", IntegerType()), StructField("l", LongType()), StructField("d", DoubleType()),
                     StructField("s", StringType())])


def _aggregate(java, function, column):
    return java.call("Running$Aggregate", "of", function, column, java.struct(SCHEMA))


def _running(java, specs, ansi=True):
    aggs = java.jvm.java.lang.reflect.Array.newInstance(java.cls("Running$Aggregate"), len(specs))
    for n, (function, column) in enumerate(specs):
        java.jvm.java.lang.reflect.Array.set(aggs, n, _aggregate(java, function, column))
    running = java.new("Running", aggs, ansi)
    java.call(running, "reset")
    return running


def _values(java, running, n):
    out = java.gateway.new_array(java.jvm.java.lang.Object, n + 1)
    java.call(running, "values", out, 1)  # written from the given index on
    assert out[0] is None
    return [out[i] for i in range(1, n + 1)]


def _add_all(java, running, rows):
    rows = [tuple(r) + (None,) * (len(SCHEMA) - len(r)) for r in rows]  # s, the string column, left out
    for r in java.internal_rows(java.spark.createDataFrame(rows, SCHEMA).coalesce(1)):
        java.call(running, "add", r)


def test_the_aggregates_the_walk_takes_and_their_result_types(java):
    def result(function, column):
        agg = _aggregate(java, function, column)
        return java.call(agg, "resultType").simpleString()

    assert [result(f, c) for f, c in [("count", "*"), ("COUNT", "s"), ("sum", "i"), ("sum", "l"), ("Sum", "d"),
                                      ("min", "i"), ("max", "l"), ("max", "d")]] == [
        "bigint", "bigint", "bigint", "bigint", "double", "int", "bigint", "double"]


@pytest.mark.parametrize("function, column, message", [
    ("sum", "*", r"sum\(\*\) is not an aggregate"),
    ("avg", "l", "the walk evaluates count, sum, min and max, not avg"),
    ("sum", "s", r"sum\(s\) of string: the walk sums and orders int, long and double columns"),
    ("max", "s", r"max\(s\) of string"),
])
def test_what_the_walk_does_not_evaluate_is_refused_by_name(java, function, column, message):
    with pytest.raises(java.Error, match=message) as err:
        _aggregate(java, function, column)
    assert err.value.java_class == "java.lang.IllegalArgumentException"


def test_before_any_element_counts_are_zero_and_the_rest_null(java):
    running = _running(java, [("count", "*"), ("count", "i"), ("sum", "l"), ("min", "d"), ("max", "i")])
    assert _values(java, running, 5) == [0, 0, None, None, None]


def test_nulls_are_counted_by_count_star_only(java):
    running = _running(java, [("count", "*"), ("count", "i"), ("sum", "i"), ("min", "l"), ("max", "d")])
    _add_all(java, running, [(None, None, None, "x"), (None, None, None, None)])
    assert _values(java, running, 5) == [2, 0, None, None, None]
    _add_all(java, running, [(3, -4, 1.5, None), (None, None, None, None), (-1, 7, -2.5, None)])
    assert _values(java, running, 5) == [5, 2, 2, -4, 1.5]


def test_values_are_spark_result_types(java):
    """min and max of an int column stay int (Spark's type), a sum of ints is a long."""
    running = _running(java, [("min", "i"), ("sum", "i"), ("max", "l")])
    _add_all(java, running, [(2, 10, None), (1, 11, None)])
    out = java.gateway.new_array(java.jvm.java.lang.Object, 3)
    java.call(running, "values", out, 0)
    row = java.jvm.org.apache.spark.sql.catalyst.expressions.GenericInternalRow(out)
    assert (row.getInt(0), row.getLong(1), row.getLong(2)) == (1, 3, 11)
    with pytest.raises(Exception, match="ClassCastException"):
        row.getLong(0)  # an Integer, not a Long


def test_doubles_are_ordered_as_spark_orders_them(java):
    """NaN is above every value, -0.0 equals 0.0 (the first of equals is kept), and a sum starts from 0.0 (so a
    sum of -0.0 is 0.0, as Spark's coalesce(sum, 0.0) + x)."""
    nan, inf = float("nan"), float("inf")
    running = _running(java, [("min", "d"), ("max", "d"), ("sum", "d")])
    _add_all(java, running, [(None, None, -0.0)])
    lo, hi, total = _values(java, running, 3)
    assert (math.copysign(1, lo), math.copysign(1, hi), math.copysign(1, total)) == (-1, -1, 1)
    _add_all(java, running, [(None, None, 0.0)])
    lo, hi, _ = _values(java, running, 3)
    assert math.copysign(1, lo) == -1 and math.copysign(1, hi) == -1  # equal: the first stays
    _add_all(java, running, [(None, None, nan), (None, None, inf), (None, None, -inf)])
    lo, hi, total = _values(java, running, 3)
    assert lo == -inf and math.isnan(hi) and math.isnan(total)


def test_compare_is_sparks_order_of_doubles(java):
    def cmp(x, y):
        c = java.call("Running", "compare", x, y)
        return (c > 0) - (c < 0)

    nan, inf = float("nan"), float("inf")
    assert [cmp(-0.0, 0.0), cmp(nan, nan), cmp(nan, inf), cmp(inf, nan), cmp(1.0, 2.0), cmp(-inf, -1e308)] == [
        0, 0, 1, -1, -1, -1]


def test_a_long_sums_overflow_is_an_error_under_ansi_and_wraps_otherwise(java):
    for ansi, expected in ((False, MIN), (True, None)):
        running = _running(java, [("sum", "l"), ("max", "l")], ansi=ansi)
        _add_all(java, running, [(None, MAX, None)])
        if expected is None:
            with pytest.raises(java.Error, match="overflow") as err:
                _add_all(java, running, [(None, 1, None)])
            assert err.value.java_class == "java.lang.ArithmeticException"
        else:
            _add_all(java, running, [(None, 1, None)])
            assert _values(java, running, 2) == [MIN, MAX]


def test_reset_starts_a_new_window(java):
    running = _running(java, [("count", "*"), ("sum", "l"), ("min", "i")])
    _add_all(java, running, [(5, 5, None)])
    java.call(running, "reset")
    assert _values(java, running, 3) == [0, None, None]
    _add_all(java, running, [(9, 1, None)])
    assert _values(java, running, 3) == [1, 1, 9]
