"""A live column's values as the comparison holds them (compare/live_values.py): times to epoch ms, aggregates to
the replay's type (a non-integral value of an integral aggregate does not convert), keys to strings, and a column
that cannot hold its role refused with its name and type."""
from __future__ import annotations

import datetime as dt

import pytest
from pyspark.sql import types as T

from event_replay.compare.live_spec import CompareInputError
from event_replay.compare.live_values import aggregate_value, key_value, replay_aggregate_type, time_ms

pytestmark = pytest.mark.spark


def test_times_become_epoch_ms_and_bad_ones_null(spark):
    df = spark.createDataFrame([("1970-01-01T00:00:01.500Z", 2500, "x")], "iso string, ms long, bad string")
    row = df.select(time_ms(df, "iso", "window_start").alias("a"), time_ms(df, "ms", "window_end").alias("b"),
                    time_ms(df, "bad", "window_end").alias("c")).first()
    assert (row.a, row.b, row.c) == (1500, 2500, None)
    ts = spark.createDataFrame([(dt.datetime(1970, 1, 1, 0, 0, 3, tzinfo=dt.timezone.utc),)], "t timestamp")
    assert ts.select(time_ms(ts, "t", "window_start").alias("t")).first().t == 3000
    flags = spark.createDataFrame([(True,)], "b boolean")
    with pytest.raises(CompareInputError, match="'b'.*boolean.*window_start"):
        time_ms(flags, "b", "window_start")


def test_aggregates_take_the_replay_type(spark):
    df = spark.createDataFrame([(3.0, 3.5, "7", "4.25", "k")], "whole double, half double, s string, f string, t string")
    row = df.select(aggregate_value(df, "whole", "cnt", T.LongType()).alias("a"),
                    aggregate_value(df, "half", "cnt", T.LongType()).alias("b"),
                    aggregate_value(df, "s", "cnt", T.LongType()).alias("c"),
                    aggregate_value(df, "f", "total", T.DoubleType()).alias("d"),
                    aggregate_value(df, "t", "name", T.StringType()).alias("e")).first()
    assert (row.a, row.b, row.c, row.d, row.e) == (3, None, 7, 4.25, "k")
    assert [replay_aggregate_type(t) for t in (T.IntegerType(), T.FloatType(), T.StringType())] == [
        T.LongType(), T.DoubleType(), T.StringType()]
    nested = spark.createDataFrame([((1,),)], "s struct<a:int>")
    with pytest.raises(CompareInputError, match="not a number"):
        aggregate_value(nested, "s", "cnt", T.LongType())
    with pytest.raises(CompareInputError, match="the key: not comparable"):
        key_value(nested, "s")


def test_keys_become_strings(spark):
    df = spark.createDataFrame([(42,)], "k int")
    assert df.select(key_value(df, "k").alias("k")).first().k == "42"
