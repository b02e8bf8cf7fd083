"""The Spark engine: stage 1 (timeline) then stage 2 (windows); see contract.py for what flows between them."""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from ..semantics.config import JobConfig
    from .contract import EngineResult
    from ..io.partitions import Partition
    from ..io.read_order import TickPartials
    from .state import CarriedState


def replay(spark: "SparkSession", rows: "DataFrame", cfg: "JobConfig", splits: Sequence[str],
           start_ms: int, end_ms: int, tick_partials: "TickPartials | None" = None) -> "EngineResult":
    """Replay clean rows (already cut to [start_ms, end_ms)) over the declared splits (sorted). `tick_partials`:
    the rows' per-(split, tick) event times if the read already took them (io/read_order.py)."""
    # Imported here so that importing the package (e.g. the CLI validating a config) does not need the stages.
    from .contract import EngineResult
    from .timeline import compute_timeline
    from .windows import compute_windows, windows_partitions

    # The timeline's rows feed the windows and the late rows (_kept says when they are materialised). The outputs
    # themselves are left lazy: each is written once. The caller frees what was cached when done (release()).
    from .windows.fire_lookup import lookup_for

    fixed_plans(spark)
    if cfg.window.time == "processing":  # windows on the replay clock, no timeline (processing_time.py)
        from .processing_time import replay as processing_time_replay
        return processing_time_replay(rows, cfg, end_ms, windows_partitions(spark, cfg))
    timeline = compute_timeline(rows, cfg, sorted(splits), start_ms, end_ms, tick_partials)
    tl_rows, stream_values = _kept(timeline)
    firings, late_rows = compute_windows(tl_rows, stream_values, cfg,
                                         fire_lookup=lookup_for(spark, timeline, cfg.window),
                                         partitions=windows_partitions(spark, cfg))
    return EngineResult(windows=firings, late_events=late_rows, watermarks=timeline.watermarks)


_PLAN_SETTINGS = {
    # The engine's plans are fixed (broadcasts hinted, partition counts chosen): re-planning at run time gains
    # nothing here and costs a job per stage and a re-optimisation of each; a fixed plan is the same on every run.
    "spark.sql.adaptive.enabled": "false",
    # Tables partitioned by key alike join per (key, window) without a shuffle (windows/fixed.py: the timer
    # firings meet their late firings); Spark's default would re-shuffle both sides by every join column.
    "spark.sql.requireAllClusterKeysForCoPartition": "false",
    # The windows' aggregate runs on rows already partitioned by key, a window holding a few rows: the small
    # first-level hash map Spark puts in front of the partial aggregate only adds a miss per row (BENCHMARKS.md).
    "spark.sql.codegen.aggregate.map.twolevel.enabled": "false",
}


def fixed_plans(spark: "SparkSession") -> None:
    """The replay's plan settings (_PLAN_SETTINGS), each unless the deployment set it."""
    deployed = spark.sparkContext.getConf()  # a copy of the JVM's conf each call: taken once
    for key, value in _PLAN_SETTINGS.items():
        if not deployed.contains(key):
            spark.conf.set(key, value)


def _kept(timeline) -> tuple["DataFrame", "DataFrame"]:
    """The timeline's rows and stream values as the windows read them. From the driver path they are cheap to
    recompute (a scan and a lookup by tick; the values are local data), so each reader recomputes them: that
    costs less than materialising every row once. From the Spark path they are materialised."""
    if timeline.known_stream_values is not None:
        return timeline.rows, timeline.stream_values
    return _materialise(timeline.rows), _materialise(timeline.stream_values)


def _materialise(df: "DataFrame") -> "DataFrame":
    """Computed once, kept on the executors, with a plan that starts here (a local checkpoint)."""
    return df.localCheckpoint(eager=True)


def replay_partition(spark: "SparkSession", rows: "DataFrame", cfg: "JobConfig", splits: Sequence[str],
                     partition: "Partition", carried: "CarriedState | None", *, end_of_input: str = "hold",
                     clean_max_offsets: dict[str, int] | None = None, with_cause: bool = False,
                     tick_partials: "TickPartials | None" = None):
    """Replay one partition's clean rows (cut to [partition.start_ms, partition.end_ms)) from the carried state of
    its predecessor (None: the partition starts a history). Returns (EngineResult, PartitionEnd): the partition's
    own outputs and what to write as its state (state.write_state). `partition` may be a span of consecutive
    partitions (engine/span.py; `with_cause`: the firings say which row caused each late firing)."""
    from pyspark.sql import functions as F

    from .contract import NEG_INF, EngineResult
    from .state import FORMAT_VERSION, Manifest, fingerprint, last_offsets_after
    from .timeline import TimelineCarry, compute_timeline_carried
    from .windows.fire_lookup import lookup_for
    from .windows import carried_rows, compute_windows_with_elements, windows_partitions

    cfg = cfg.with_end_of_input(end_of_input)
    fixed_plans(spark)
    if cfg.window.time == "processing":  # windows on the replay clock, no timeline (processing_time.py)
        from .processing_time import replay_partition as processing_time_partition
        result, (manifest, split_state, keep) = processing_time_partition(rows, cfg, splits, partition, carried,
                                                                          end_of_input, clean_max_offsets,
                                                                          with_cause)
        return result, PartitionEnd(manifest=manifest, splits=split_state, rows=keep)
    if cfg.watermark.periodic and partition.end_ms - partition.start_ms < cfg.watermark.interval_ms:
        raise ValueError(f"partition {partition.id} is shorter than the watermark interval")
    m = carried.manifest if carried is not None else None
    all_splits = sorted(set(splits) | set(m.splits if m else ()))
    carry = None
    if m is not None:
        carry = TimelineCarry(origin_tick=m.origin_tick, stream_wm=m.stream_watermark, stream_idle=m.stream_idle,
                              splits=carried.splits)
    timeline, end = compute_timeline_carried(rows, cfg, all_splits, partition.start_ms, partition.end_ms, carry,
                                             tick_partials)
    # As in replay(): the rows with their watermark as the windows read them (_kept).
    tl_rows, stream_values = _kept(timeline)
    window_rows, carried_rows_in = tl_rows, None
    if carried is not None:
        carried_rows_in = carried.rows
        window_rows = _materialise(carried.rows.select(*tl_rows.columns).unionByName(tl_rows))
    w0 = m.stream_watermark if m is not None else NEG_INF
    firings, late_rows, elems = compute_windows_with_elements(
        window_rows, stream_values, cfg, new_from_ms=partition.start_ms if carried is not None else None,
        carried_wm=w0 if carried is not None else None,
        fire_lookup=lookup_for(spark, timeline, cfg.window, carried_rows_in),
        partitions=windows_partitions(spark, cfg),
        with_cause=with_cause)
    result = EngineResult(windows=firings, late_events=late_rows, watermarks=timeline.watermarks)

    # The end state: two small aggregates (scalars) on the driver, the rest stays in DataFrames.
    top = stream_values.agg(F.max("watermark")).collect()[0][0]
    w_end = max(w0, top) if top is not None else w0
    last = end.stream_last.collect() if end.stream_last is not None else []  # at most one row
    idle_end = bool(last[0][0]) if last else (m.stream_idle if m else False)
    manifest = Manifest(format_version=FORMAT_VERSION, fingerprint=fingerprint(cfg), partition=partition.id,
                        previous=None if m is None else m.partition, emit=cfg.watermark.emit,
                        origin_tick=end.origin_tick, stream_watermark=w_end, stream_idle=idle_end,
                        splits=all_splits, flushed=end_of_input == "flush", last_offsets=last_offsets_after(rows, m, clean_max_offsets))
    keep = carried_rows(window_rows, elems, cfg, w_end)
    return result, PartitionEnd(manifest=manifest, splits=end.splits, rows=keep)


class PartitionEnd:
    """What a partition leaves for its successor (written by state.write_state)."""

    def __init__(self, manifest, splits, rows):
        self.manifest, self.splits, self.rows = manifest, splits, rows


def release(spark: "SparkSession") -> None:
    """Drop what replay() cached (the session's whole cache: one job per session)."""
    spark.catalog.clearCache()
