"""io/span_source.py: each row's folder start, read from its file's path, is its partition's start. (A span read
as a whole against the one-by-one reads: tests/test_range_replay.py.)"""
from __future__ import annotations

import pytest
from pyspark.sql import functions as F

from event_replay.history.partitions import Partition
from event_replay.io.span_source import folder_start

pytestmark = pytest.mark.spark


def test_folder_start_is_the_partitions_start(spark):
    paths = ["file:/data/src/dt=2024-02-29/hour=23/part-0.parquet", "s3a://b/x/dt=2024-03-01/hour=00/f.csv",
             "/in/dt=2023-12-31/part-1.parquet"]
    df = spark.createDataFrame([(p,) for p in paths], "path string")
    hours = spark.createDataFrame([(p,) for p in paths[:2]], "path string")  # an hourly read sees hour folders only
    hourly = [r[0] for r in hours.select(folder_start(F.col("path"), True)).collect()]
    assert hourly == [Partition.parse("2024-02-29T23").start_ms, Partition.parse("2024-03-01T00").start_ms]
    daily = [r[0] for r in df.select(folder_start(F.col("path"), False)).collect()]
    assert daily == [Partition.parse(d).start_ms for d in ("2024-02-29", "2024-03-01", "2023-12-31")]
