"""The replay job: plans for pipeline.run, a whole source (`run_replay`) or one partition of a `dt=`-partitioned
source continuing its predecessor's state (`partition_plan`, checked without Spark; `pipeline.run` runs it).
What `replay run` (and so `jobs/replay_job.py`, the Airflow tasks) calls; the CLI only parses arguments around it;
a range is range_replay.py."""
from __future__ import annotations

from .history.partitions import Partition
from .history.state import require_declared_splits
from .io.output import WriteSummary
from .pipeline import OnePartition, WholeSource, run
from .semantics.config import JobConfig


def run_replay(spark, cfg: JobConfig) -> WriteSummary:
    """Read, replay, write the whole source on an existing Spark session, under the output's lock (an interrupted
    commit of an earlier run is rolled forward first)."""
    return run(spark, cfg, WholeSource())


def partition_plan(cfg: JobConfig, partition: str, *, first: bool = False, end_of_input: str = "hold",
                   previous: str | None = None, allow_missing: bool = False) -> OnePartition:
    """The plan of one partition's run, checked without Spark: the id parsed, `source.splits` declared (a
    ConfigError otherwise: exit 2). `replay run --partition` builds it before the session starts."""
    p = Partition.parse(partition)
    require_declared_splits(cfg)
    return OnePartition(p, first=first, previous=previous, end_of_input=end_of_input, allow_missing=allow_missing)
