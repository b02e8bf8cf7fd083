"""The plan's partitions in jobs of `partitions_per_job`: one spark-submit each of `replay run --plan JSON`, the
job's range plan (pipeline.PartitionSpan) as the planner serialised it once (`job_plans`).

A job pays the JVM start and the Spark session once for its whole chunk (range_replay.py), so a larger chunk means
fewer start-ups; a smaller chunk means a retry has less to redo when a job fails outright (within a chunk the job
itself continues after its last committed partition). The chunks run strictly in order, like the partitions.
"""
from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from ..io.files import input_bytes
from ..pipeline import OnePartition, PartitionSpan
from ..semantics.config_keys import ConfigError

DEFAULT_PARTITIONS_PER_JOB = 31  # a month of days: 12 JVM starts a year


def partitions_per_job(params: Mapping[str, Any]) -> int:
    """The request's chunk size (the form field), checked: a positive whole number."""
    value = params.get("partitions_per_job")
    if value is None or value == "":
        return DEFAULT_PARTITIONS_PER_JOB
    if isinstance(value, bool) or not (isinstance(value, int) or (isinstance(value, str) and value.isdigit())) \
            or int(value) < 1:
        raise ConfigError("params.partitions_per_job", f"{value!r}: expected a whole number >= 1")
    return int(value)


def chunk_runs(runs: Sequence[OnePartition], size: int) -> list[tuple[OnePartition, ...]]:
    """Consecutive runs, `size` at a time, in order."""
    return [tuple(runs[i:i + size]) for i in range(0, len(runs), size)]


def chunk_plan(chunk: Sequence[OnePartition]) -> PartitionSpan:
    """The plan of the job replaying the chunk in one Spark application. The plan's partitions are consecutive,
    each continuing the one before, so the range needs only what its first and last runs say."""
    first, last = chunk[0], chunk[-1]
    return PartitionSpan.between(first.partition.id, last.partition.id, first=first.first,
                                 previous=None if first.first else first.previous, end_of_input=last.end_of_input,
                                 allow_missing=any(r.allow_missing for r in chunk))


def job_bytes(source_path: str, runs: Sequence[OnePartition], size: int) -> list[int | None]:
    """About what each job reads of the source (io/files.input_bytes; None: not known without Spark): its driver's
    JVM is chosen by it (driver_jvm.py)."""
    return [input_bytes(source_path, [r.partition.subpath for r in chunk]) for chunk in chunk_runs(runs, size)]


def run_bytes(p: Mapping[str, Any]) -> int | None:
    """About what the run reads of the source, from the plan task's result: what each step after the replay works
    through (the replay's outputs of it, its variants). None when a job's is not known."""
    sizes = p.get("job_bytes") or [None]
    return None if None in sizes else sum(sizes)


def job_plans(runs: Sequence[OnePartition], size: int) -> list[str]:
    """Each job's plan serialised, once, by the planner: the `--plan` argument of its spark-submit."""
    return [json.dumps(chunk_plan(chunk).to_dict()) for chunk in chunk_runs(runs, size)]


def job_args(config_path: str, plan: str) -> list[str]:
    """Arguments of jobs/replay_job.py (`replay run`) for a job's serialised plan."""
    return ["--config", config_path, "--plan", plan]
