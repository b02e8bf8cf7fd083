"""io/quarantine.py: the role columns' conversions (times to epoch ms from every accepted type, offsets to longs;
null where a row must be quarantined), refused types naming their key, and which columns compare as a row's
content. (The reasons and the row accounting over a real source: test_source.py, test_quarantine_accounting.py.)"""
from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from pyspark.sql import functions as F
from pyspark.sql import types as T

from event_replay.io.quarantine import offset_to_long, orderable_columns, time_to_ms
from event_replay.semantics.config_keys import ConfigError

pytestmark = pytest.mark.spark
T0 = 1_704_067_200_123  # 2024-01-01T00:00:00.123Z


def _converted(spark, values, dtype, convert):
    df = spark.createDataFrame([(v,) for v in values], T.StructType([T.StructField("c", dtype, True)]))
    return [r[0] for r in df.select(convert(F.col("c"), dtype)).collect()]


def test_times_in_every_accepted_type_become_epoch_ms(spark):
    ts = dt.datetime(2024, 1, 1, 0, 0, 0, 123456, tzinfo=dt.timezone.utc)
    conv = lambda c, t: time_to_ms(c, t, "source.columns.event_time")  # noqa: E731
    assert _converted(spark, [ts], T.TimestampType(), conv) == [T0]  # microseconds floored
    assert _converted(spark, [dt.date(2024, 1, 1)], T.DateType(), conv) == [T0 - 123]
    assert _converted(spark, [T0, None], T.LongType(), conv) == [T0, None]
    assert _converted(spark, [T0 + 0.9, -1.5], T.DoubleType(), conv) == [T0, -2]
    assert _converted(spark, [f" {T0} ", "2024-01-01T00:00:00.123Z", "yesterday"], T.StringType(), conv) == [
        T0, T0, None]
    with pytest.raises(ConfigError) as err:
        time_to_ms(F.col("c"), T.BooleanType(), "source.columns.event_time")
    assert err.value.key == "source.columns.event_time"


def test_offsets_are_whole_numbers(spark):
    assert _converted(spark, [7, None], T.IntegerType(), offset_to_long) == [7, None]
    assert _converted(spark, [" 12", "1e3", "x"], T.StringType(), offset_to_long) == [12, None, None]
    assert _converted(spark, [Decimal("3.0"), Decimal("1.5")], T.DecimalType(10, 1), offset_to_long) == [3, None]
    with pytest.raises(ConfigError, match="expected an integer"):
        offset_to_long(F.col("c"), T.TimestampType())


def test_maps_are_not_orderable_anywhere_inside_a_column(spark):
    schema = ("a long, m map<string,long>, s struct<x: long, y: map<string,long>>, l array<long>, "
              "lm array<map<string,long>>, t struct<x: string>")
    df = spark.createDataFrame([], schema)
    assert orderable_columns(df) == ["a", "l", "t"]
