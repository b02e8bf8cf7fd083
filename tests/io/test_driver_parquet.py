"""A table the driver holds is written without a Spark job, and reads back as Spark's own write of it reads."""
from __future__ import annotations

import datetime as dt
import glob

import pyarrow.parquet as pq
import pytest

from event_replay.io.driver_parquet import SPARK_SCHEMA_KEY, written_by_driver
from event_replay.spark import local_frame
from event_replay.spark_jobs import counted

SCHEMA = "split string not null, t bigint, idle boolean, x double, day date"
ROWS = [("p1", 5, True, 0.5, dt.date(2024, 1, 2)), ("p0", None, False, float("nan"), None),
        ("p0", 3, None, -0.0, dt.date(2024, 1, 1)), ("é", 1, True, 1e300, None), ("z", 2, False, 2.0, None)]


def _spark_write(df, order, path):
    df.repartition(1).sortWithinPartitions(*order).write.mode("errorifexists").parquet(path)


def test_a_local_table_is_written_without_a_job_and_reads_as_spark_writes_it(spark, tmp_path):
    df = local_frame(spark, ROWS, SCHEMA)
    with counted(spark, "driver-write") as jobs:
        assert written_by_driver(df, ["split", "t"], str(tmp_path / "driver"))
    assert jobs.jobs == 0
    _spark_write(df, ["split", "t"], str(tmp_path / "spark"))
    by_driver, by_spark = (spark.read.parquet(str(tmp_path / name)) for name in ("driver", "spark"))
    assert by_driver.schema == by_spark.schema
    # In file order: the driver sorted as Spark does (nulls first, strings by code point).
    assert [tuple(map(repr, r)) for r in by_driver.collect()] == [tuple(map(repr, r)) for r in by_spark.collect()]
    files = glob.glob(str(tmp_path / "driver" / "part-00000-*-c000.snappy.parquet"))
    assert len(files) == 1 and (tmp_path / "driver" / "_SUCCESS").exists()
    assert SPARK_SCHEMA_KEY in pq.read_schema(files[0]).metadata


@pytest.mark.parametrize("output_type", ["TIMESTAMP_MICROS", "INT96"])
def test_an_empty_table_with_timestamps_has_the_physical_types_spark_writes(spark, tmp_path, output_type):
    before = spark.conf.get("spark.sql.parquet.outputTimestampType")
    spark.conf.set("spark.sql.parquet.outputTimestampType", output_type)
    try:
        df = local_frame(spark, [], "a timestamp, k string")
        assert written_by_driver(df, ["k"], str(tmp_path / "driver"))
        _spark_write(df, ["k"], str(tmp_path / "spark"))
    finally:
        spark.conf.set("spark.sql.parquet.outputTimestampType", before)
    physical = [pq.ParquetFile(glob.glob(str(tmp_path / name / "*.parquet"))[0]).schema.column(0).physical_type
                for name in ("driver", "spark")]
    assert physical[0] == physical[1] == ("INT96" if output_type == "INT96" else "INT64")
    assert spark.read.parquet(str(tmp_path / "driver")).schema == spark.read.parquet(str(tmp_path / "spark")).schema


def test_what_the_driver_cannot_write_as_spark_would_is_left_to_spark(spark, tmp_path):
    ts_row = local_frame(spark, [(dt.datetime(2024, 1, 1),)], "a timestamp")  # a value in the session's time zone
    order_by_double = local_frame(spark, [(1.0,), (float("nan"),)], "x double")  # NaN sorts last in Spark
    in_spark = spark.range(3)
    for i, (df, order) in enumerate([(ts_row, ["a"]), (order_by_double, ["x"]), (in_spark, ["id"])]):
        assert not written_by_driver(df, order, str(tmp_path / f"no-{i}"))
        assert not (tmp_path / f"no-{i}").exists()
    written_by_driver(local_frame(spark, [], "k string"), [], str(tmp_path / "once"))
    with pytest.raises(FileExistsError):  # as Spark's errorifexists
        written_by_driver(local_frame(spark, [], "k string"), [], str(tmp_path / "once"))


@pytest.mark.parametrize("output_type", ["INT96", "TIMESTAMP_MICROS"])
def test_timestamps_from_milliseconds_are_written_with_their_rows_as_spark_writes_them(spark, tmp_path, output_type):
    """The watermarks' shape: each timestamp from a long column of milliseconds (null outside Spark's range, as
    ms_to_timestamp gives), ordered with a column's nulls last; the same rows, values, order and physical types as
    Spark's own write."""
    from pyspark.sql import functions as F

    from event_replay.io.output import ms_to_timestamp

    neg_inf, pos_inf = -(2 ** 63), 2 ** 63 - 1
    longs = local_frame(spark, [(1_700_000_000_123, "stream", None, neg_inf, False),
                                (1_700_000_000_123, "split", "p1", None, True),
                                (1_700_000_000_123, "split", "p0", 1_699_999_999_000, False),
                                (1_700_000_000_000, "split", "p0", 1_699_999_998_000, False),
                                (1_700_000_000_200, "stream", None, pos_inf, False)],
                        "t_ms bigint not null, scope string not null, split string, w_ms bigint, idle boolean not null")
    df = longs.select(ms_to_timestamp(F.col("t_ms")).alias("t"), "scope", "split",
                      ms_to_timestamp(F.col("w_ms")).alias("w"), "idle", "w_ms", "t_ms")
    order = ["t_ms", "scope", "split", "idle", ("w_ms", "nulls_last")]
    before = spark.conf.get("spark.sql.parquet.outputTimestampType")
    spark.conf.set("spark.sql.parquet.outputTimestampType", output_type)
    try:
        with counted(spark, "driver-write") as jobs:
            assert written_by_driver(df, order, str(tmp_path / "driver"), ms_of={"t": "t_ms", "w": "w_ms"})
        assert jobs.jobs == 0
        _spark_write(df, [F.col("t_ms"), F.col("scope"), F.col("split").asc_nulls_first(), F.col("idle"),
                          F.col("w_ms").asc_nulls_last()], str(tmp_path / "spark"))
    finally:
        spark.conf.set("spark.sql.parquet.outputTimestampType", before)
    by_driver, by_spark = (spark.read.parquet(str(tmp_path / name)) for name in ("driver", "spark"))
    assert by_driver.schema == by_spark.schema
    assert [tuple(r) for r in by_driver.collect()] == [tuple(r) for r in by_spark.collect()]
    assert by_driver.where(F.col("w").isNull()).count() == 3  # -inf, +inf and idle: no timestamp
    physical = {pq.ParquetFile(glob.glob(str(tmp_path / name / "*.parquet"))[0]).schema.column(0).physical_type
                for name in ("driver", "spark")}
    assert physical == {"INT96" if output_type == "INT96" else "INT64"}


def test_a_timestamp_from_milliseconds_before_1900_is_left_to_spark(spark, tmp_path):
    from pyspark.sql import functions as F

    from event_replay.io.output import ms_to_timestamp

    df = local_frame(spark, [(-2_208_988_800_001,)], "t_ms bigint").select(
        ms_to_timestamp(F.col("t_ms")).alias("t"), "t_ms")
    assert not written_by_driver(df, ["t_ms"], str(tmp_path / "old"), ms_of={"t": "t_ms"})
    assert not written_by_driver(df, ["t_ms"], str(tmp_path / "old"), ms_of={"t_ms": "t"})  # not a timestamp
    assert not (tmp_path / "old").exists()
