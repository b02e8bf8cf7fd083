"""The timer firings of session windows, looked up without a join on the driver: value buckets.

A timer at max timestamp q fires at the smallest value the stream moved to that is >= q. Session window ends are
not on a grid, so there is no table per window end as for tumbling and sliding windows (fire_lookup.py); but when
the timeline was computed on the driver its values are known there, sorted. They are cut into buckets of one width
(chosen so that a bucket holds about `VALUES_PER_BUCKET` of them on average), and each bucket becomes one row:
its values and the first value after it. A firing computes its bucket from q (clamped to the first and last
bucket: below the first, every value of the first bucket is >= q; above the last, no value is), meets the bucket's
row by a broadcast join (the firings keep their partitioning) and takes the smallest of its values >= q, else the
next bucket's first value. Exact for any q: a value >= q is either in q's bucket or after it. -inf is never a
value >= a timer; +inf (every split idle) is the value after every bucket.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from ..contract import NEG_INF, POS_INF

VALUES_PER_BUCKET = 64


@dataclass(frozen=True)
class ValueBuckets:
    table: DataFrame  # __b, __vals (ascending), __next (null: no value after the bucket)
    origin: int  # bucket b holds values in [origin + b * width, origin + (b + 1) * width)
    width: int
    count: int

    def looked_up(self, with_q: DataFrame) -> DataFrame:
        """`with_q` with `__v`: the smallest value >= `__q` (null where `__q` is null or no value is >= it)."""
        q = F.col("__q")
        bucket = F.least(F.greatest(F.floor((q - F.lit(self.origin)) / F.lit(self.width)).cast("long"), F.lit(0)),
                         F.lit(self.count - 1))
        inside = F.array_min(F.filter(F.col("__vals"), lambda v: v >= q))
        return (with_q.withColumn("__b", F.when(q.isNotNull(), bucket))
                .join(F.broadcast(self.table), "__b", "left")
                .withColumn("__v", F.when(q.isNotNull(), F.coalesce(inside, F.col("__next"))))
                .drop("__b", "__vals", "__next"))


def value_buckets(spark: SparkSession, stream_values: np.ndarray) -> ValueBuckets:
    """The buckets of the stream's values (ascending, as the driver's timeline has them)."""
    values = np.asarray(stream_values, dtype=np.int64)
    finite = values[(values > NEG_INF) & (values < POS_INF)]
    after_all = POS_INF if (values == POS_INF).any() else None
    if not len(finite):
        table = pa.table({"__b": pa.array([0], pa.int64()), "__vals": pa.array([[]], pa.list_(pa.int64())),
                          "__next": pa.array([after_all], pa.int64())})
        return ValueBuckets(spark.createDataFrame(table), origin=0, width=1, count=1)
    origin = int(finite[0])
    span = int(finite[-1]) - origin + 1
    width = max(1, -(-span * VALUES_PER_BUCKET // len(finite)))
    bucket = (finite - origin) // width
    count = int(bucket[-1]) + 1
    bounds = np.searchsorted(bucket, np.arange(count + 1), side="left")
    nxt = [int(finite[b]) if b < len(finite) else after_all for b in bounds[1:]]
    table = pa.table({"__b": pa.array(np.arange(count), pa.int64()),
                      "__vals": pa.ListArray.from_arrays(pa.array(bounds, pa.int32()), pa.array(finite, pa.int64())),
                      "__next": pa.array(nxt, pa.int64())})
    return ValueBuckets(spark.createDataFrame(table), origin=origin, width=width, count=count)
