"""How many Spark jobs a step ran: each report counts its own and prints the count in the run report.

`counted(spark, step)` tags the Spark jobs the calling thread starts with a job group of the step's name (PySpark
pins local properties to the Python thread, so two steps side by side in two threads are told apart) and, on exit,
reads how many jobs that group ran from Spark's status store, once the listener bus has delivered them. The store keeps `spark.ui.retainedJobs` jobs (1000 by
default): a count at that bound is "at least".
"""
from __future__ import annotations

import itertools
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

from pyspark.sql import SparkSession

_serial = itertools.count(1)


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
    sc = spark.sparkContext
    group = f"event-replay-{step}-{next(_serial)}"  # unique: a second run of a step in one session starts at 0
    count = JobCount(step)
    sc.setJobGroup(group, step)
    try:
        yield count
    finally:
        _listeners_caught_up(sc)
        count.jobs = len(sc.statusTracker().getJobIdsForGroup(group))
        sc.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
        sc.setLocalProperty("spark.job.description", None)  # type: ignore[arg-type]
