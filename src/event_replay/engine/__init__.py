"""The Spark engine: stage 1 (timeline) then stage 2 (windows); see contract.py for what flows between them."""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from ..semantics.config import JobConfig
    from .contract import EngineResult


def replay(spark: "SparkSession", rows: "DataFrame", cfg: "JobConfig", splits: Sequence[str],
           start_ms: int, end_ms: int) -> "EngineResult":
    """Replay clean rows (already cut to [start_ms, end_ms)) over the declared splits (sorted)."""
    # Imported here so that importing the package (e.g. the CLI validating a config) does not need the stages.
    from .contract import EngineResult
    from .timeline import compute_timeline
    from .windows import compute_windows

    from pyspark import StorageLevel

    # Each output is written by its own Spark action; without caching, every write would recompute the
    # timeline (and windows and late rows share the window stage). The caller frees the cache when done
    # (release()).
    level = StorageLevel.MEMORY_AND_DISK
    timeline = compute_timeline(rows, cfg, sorted(splits), start_ms, end_ms)
    tl_rows, stream_values = timeline.rows.persist(level), timeline.stream_values.persist(level)
    firings, late_rows = compute_windows(tl_rows, stream_values, cfg)
    return EngineResult(windows=firings.persist(level), late_events=late_rows.persist(level),
                        watermarks=timeline.watermarks.persist(level))


def release(spark: "SparkSession") -> None:
    """Drop what replay() cached (the session's whole cache: one job per session)."""
    spark.catalog.clearCache()
