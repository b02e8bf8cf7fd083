"""The replay job of a whole source (`run_replay`: pipeline.run of WholeSource), what `replay run` without
--partition(s), bench/ and the tests call on an existing session. A partition's plan is pipeline.py's
(`OnePartition.checked`), a range's range_replay.py's."""
from __future__ import annotations

from .io.output import WriteSummary
from .pipeline import WholeSource, run
from .semantics.config import JobConfig


def run_replay(spark, cfg: JobConfig) -> WriteSummary:
    """Read, replay, write the whole source on an existing Spark session, under the output's lock (an interrupted
    commit of an earlier run is rolled forward first)."""
    return run(spark, cfg, WholeSource())
