"""How many Spark jobs a step runs: each report counts its own and prints the count in the run report, and
gathers its small results in one job.

`counted(spark, step)` tags the Spark jobs the calling thread starts with a job group of the step's name (PySpark
pins local properties to the Python thread, so two steps side by side in two threads are told apart) and, on exit,
reads how many jobs that group ran from Spark's status store, once the listener bus has delivered them. The store keeps `spark.ui.retainedJobs` jobs (1000 by
default): a count at that bound is "at least".

`gather(frames)` collects many small results (a report's figures, each a few rows) in one Spark job instead of one
job each: every frame's rows become JSON text tagged with the frame's name, the frames are unioned and collected
once. Rows come back as dicts in each frame's own order (a union keeps its children's partitions in order);
timestamps and dates as their text in the session's time zone. A frame to gather holds no global sort (each is a
job of its own, sampling the rows to cut them into ranges): sort on the driver, or take `first_rows`.
"""
from __future__ import annotations

import itertools
import json
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from functools import reduce
from typing import Any, Iterator, Mapping

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

_serial = itertools.count(1)
_open = threading.local()  # per thread, the counts open around the current step (innermost last)


@dataclass
class JobCount:
    """The Spark jobs a step ran, filled in when its `counted` block ends."""
    step: str
    jobs: int = 0


def _listeners_caught_up(sc) -> None:
    """The status store learns of a job from Spark's listener bus, which runs behind the job: wait until it has
    delivered every event posted so far (LiveListenerBus.waitUntilEmpty, public in the JVM, not in PySpark)."""
    try:
        sc._jsc.sc().listenerBus().waitUntilEmpty(10_000)
    except Exception:  # noqa: BLE001 - a count is a figure of the report, never a reason for it to fail
        pass


@contextmanager
def counted(spark: SparkSession, step: str) -> Iterator[JobCount]:
    """Counts nest: a step counted inside another (the calibration inside `replay compare`, itself inside a
    benchmark's step) is part of the outer count too."""
    sc = spark.sparkContext
    group = f"event-replay-{step}-{next(_serial)}"  # unique: a second run of a step in one session starts at 0
    count = JobCount(step)
    outer = (sc.getLocalProperty("spark.jobGroup.id"), sc.getLocalProperty("spark.job.description"))
    enclosing = _open.__dict__.setdefault("counts", [])
    enclosing.append(count)
    sc.setJobGroup(group, step)
    try:
        yield count
    finally:
        _listeners_caught_up(sc)
        enclosing.pop()
        count.jobs += len(sc.statusTracker().getJobIdsForGroup(group))
        if enclosing:
            enclosing[-1].jobs += count.jobs
        sc.setLocalProperty("spark.jobGroup.id", outer[0])  # type: ignore[arg-type]
        sc.setLocalProperty("spark.job.description", outer[1])  # type: ignore[arg-type]


def _as_text(field: T.StructField):
    timed = isinstance(field.dataType, (T.TimestampType, T.TimestampNTZType, T.DateType))
    return F.col(f"`{field.name}`").cast("string").alias(field.name) if timed else F.col(f"`{field.name}`")


def gather(frames: Mapping[str, DataFrame]) -> dict[str, list[dict[str, Any]]]:
    """{name: the rows of frames[name], as dicts}, all collected in one Spark job (module doc). Keep the frames
    small: every row reaches the driver."""
    names = list(frames)
    if not names:
        return {}
    parts = [df.select(F.lit(i).alias("_frame"),
                       F.to_json(F.struct(*[_as_text(f) for f in df.schema.fields]),
                                 {"ignoreNullFields": "false"}).alias("_row"))
             for i, df in enumerate(frames.values())]
    found: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    union = reduce(DataFrame.unionAll, parts)
    with one_job_plans(union.sparkSession):
        rows = union.collect()
    for r in rows:
        found[names[r["_frame"]]].append(json.loads(r["_row"]))
    return found


@contextmanager
def one_job_plans(spark: SparkSession) -> Iterator[None]:
    """Queries planned inside the block run as one Spark job each: their joins are sort-merge joins (a broadcast is
    a job of its own, before the query's; a report's joins meet small tables on a few shuffle partitions) and
    their plans are fixed (adaptive execution runs each query stage as a job). A frame is planned at its action,
    or when it is cached: a report caches and collects inside the block. An explicit broadcast hint still
    broadcasts."""
    with session_conf(spark, {"spark.sql.autoBroadcastJoinThreshold": "-1", "spark.sql.adaptive.enabled": "false"}):
        yield


@contextmanager
def session_conf(spark: SparkSession, settings: Mapping[str, str]) -> Iterator[None]:
    """The session's SQL conf set to `settings` inside the block, each key's value before it restored after."""
    before = {key: spark.conf.get(key) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in before.items():
            spark.conf.set(key, value)


def first_rows(df: DataFrame, order: list[str], n: int, fan_out: int = 16) -> DataFrame:
    """The first `n` rows of `df` by the columns `order` (ascending, a total order), without a global sort: the
    first n of each of `fan_out` hash groups, then the first n of those in one small partition. Lazy."""
    group = F.pmod(F.xxhash64(*order), F.lit(fan_out))
    rank = "_first_rows_rank"
    per_group = (df.withColumn(rank, F.row_number().over(Window.partitionBy(group).orderBy(*order)))
                 .where(F.col(rank) <= n).drop(rank))
    return (per_group.withColumn(rank, F.row_number().over(Window.orderBy(*order))).where(F.col(rank) <= n)
            .orderBy(rank).drop(rank))
