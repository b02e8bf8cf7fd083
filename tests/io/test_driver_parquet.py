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
