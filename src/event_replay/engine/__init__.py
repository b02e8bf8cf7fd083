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

    timeline = compute_timeline(rows, cfg, sorted(splits), start_ms, end_ms)
    firings, late_rows = compute_windows(timeline.rows, timeline.stream_values, cfg)
    return EngineResult(windows=firings, late_events=late_rows, watermarks=timeline.watermarks)
