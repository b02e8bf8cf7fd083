"""A range's per-(split, tick) event times in the scratch folder, in buckets of equal tick spans, for a driver that
takes them a run of buckets at a time (engine/timeline/driver_chunks.py).

An entry is (split, tick, min_event_time, max_event_time); one (split, tick) may have several entries (the read's
partitions each give one), which the driver combines. Bucket b holds the ticks in [first_tick + b * width,
first_tick + (b + 1) * width); bucket 0 also every earlier tick and the last bucket every later one, so a range
that starts or ends elsewhere than the writer's still finds every entry. Two writers fill it: the read-order pass's
tick records past the driver's bound (io/read_order.py: no second pass over the rows), and an aggregate of the rows
when the read took none.
"""
from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from .scratch import scratch_dataset

N_TICK_BUCKETS = 256  # at most; finer buckets cut chunks nearer the driver's bound
BUCKET = "_bucket"


@dataclass(frozen=True)
class TickBuckets:
    path: str  # Parquet, partitioned by BUCKET
    first_tick: int
    width: int  # ms of ticks per bucket, a multiple of the interval
    n_buckets: int
    counts: dict[int, int]  # entries per bucket (absent: none)

    def __post_init__(self):
        if self.width <= 0 or self.n_buckets <= 0:
            raise ValueError(f"width and n_buckets must be positive, got {self.width}, {self.n_buckets}")

    def bucket_of(self, tick: int) -> int:
        return min(max((tick - self.first_tick) // self.width, 0), self.n_buckets - 1)

    def start_of(self, bucket: int) -> int:
        return self.first_tick + bucket * self.width


def write_tick_buckets(entries: DataFrame, first_tick: int, last_tick: int, interval: int,
                       one_file_per_bucket: bool) -> TickBuckets | None:
    """Write `entries` (split, tick, min_event_time, max_event_time) bucketed over [first_tick, last_tick]; None
    without a scratch folder. `one_file_per_bucket` shuffles them by bucket first (entries spread over many tasks,
    e.g. after an aggregate); else each task writes a file per bucket it holds (the read's tasks: a stretch of
    arrival time each, on a log written as it arrived)."""
    if interval <= 0 or last_tick < first_tick:
        raise ValueError(f"need interval > 0 and first_tick <= last_tick, got {interval}, {first_tick}, {last_tick}")
    path = scratch_dataset(entries.sparkSession)
    if path is None:
        return None
    count = (last_tick - first_tick) // interval + 1
    per_bucket = -(-count // N_TICK_BUCKETS)
    geometry = TickBuckets(path, first_tick, per_bucket * interval, -(-count // per_bucket), {})
    out = entries.select("split", "tick", "min_event_time", "max_event_time",
                         _bucket_column(F.col("tick"), geometry).alias(BUCKET))
    if one_file_per_bucket:
        out = out.repartition(BUCKET)
    out.write.partitionBy(BUCKET).parquet(path)
    counts = entries.sparkSession.read.parquet(path).groupBy(BUCKET).count().collect()
    return TickBuckets(path, geometry.first_tick, geometry.width, geometry.n_buckets,
                       {r[BUCKET]: r["count"] for r in counts})


def read_buckets(spark, buckets: TickBuckets, lo: int, hi: int) -> DataFrame:
    """The entries of buckets lo..hi."""
    return (spark.read.parquet(buckets.path).filter(F.col(BUCKET).between(lo, hi))
            .select("split", "tick", "min_event_time", "max_event_time"))


def _bucket_column(tick: Column, b: TickBuckets) -> Column:
    raw = F.floor((tick - F.lit(b.first_tick)) / F.lit(b.width))
    return F.least(F.greatest(raw, F.lit(0)), F.lit(b.n_buckets - 1)).cast("int")
