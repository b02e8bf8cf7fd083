"""The Spark engine: stage 1 (timeline) then stage 2 (windows); see contract.py for what flows between them."""
from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from pyspark.sql import functions as F

from .carry import Carry, last_offsets_after
from .contract import NEG_INF, EngineResult
from .processing_time import replay as processing_time_replay
from .timeline import TimelineCarry, compute_timeline_carried
from .windows import carried_rows, compute_windows_with_elements, windows_partitions
from .windowed import windowed_only
from .windows.fire_lookup import lookup_for

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from ..io.read_order import TickPartials
    from ..semantics.config import JobConfig


def replay(spark: "SparkSession", rows: "DataFrame", cfg: "JobConfig", splits: Sequence[str], clock,
           carried: "Carry | None" = None, *, clean_max_offsets: dict[str, int] | None = None,
           with_cause: bool = False,
           tick_partials: "TickPartials | None" = None) -> tuple["EngineResult", "Carry | None"]:
    """Replay clean rows (cut to [clock.start_ms, clock.end_ms)) over the declared splits, continuing from the state
    `carried` from the previous range (None: the history starts here). Returns the range's outputs and the Carry the
    next range continues from, computed here when the clock has an id (its state is kept), else None (a replay that
    keeps no state never pays for it).

    `clock`: the replay clock's range, `start_ms`, `end_ms` and `id` (history/partitions.py: a Clock of a whole
    source, a partition or a span of them, history/span.py; the id is None when no state is kept). `with_cause`: the firings say
    which row caused each late firing). `clean_max_offsets`: the read's highest clean offset per split, for the
    state. `tick_partials`: the rows' per-(split, tick) event times if the read took them (io/read_order.py)."""
    fixed_plans(spark)
    if cfg.window.time == "processing":  # windows on the replay clock, no timeline (processing_time.py)
        return processing_time_replay(rows, cfg, splits, clock, carried, clean_max_offsets, with_cause)
    if clock.id is not None and cfg.watermark.periodic and clock.end_ms - clock.start_ms < cfg.watermark.interval_ms:
        raise ValueError(f"partition {clock.id} is shorter than the watermark interval")
    all_splits = sorted(set(splits) | set(carried.splits if carried else ()))
    carry = None
    if carried is not None:
        carry = TimelineCarry(origin_tick=carried.origin_tick, stream_wm=carried.stream_watermark,
                              stream_idle=carried.stream_idle, splits=carried.split_states)
    timeline, end = compute_timeline_carried(rows, cfg, all_splits, clock.start_ms, clock.end_ms, carry,
                                             tick_partials)
    # The timeline's rows feed the windows and the late rows (_kept says when they are materialised). The outputs
    # themselves are left lazy: each is written once. The caller frees what was cached when done (release()).
    tl_rows, stream_values = _kept(timeline)
    if cfg.filter is not None:  # every row drove the timeline; only the filter's reach the windows
        tl_rows = windowed_only(tl_rows)
    window_rows, carried_rows_in = tl_rows, None
    if carried is not None:
        carried_rows_in = carried.rows
        window_rows = _materialise(carried.rows.select(*tl_rows.columns).unionByName(tl_rows))
    w0 = carried.stream_watermark if carried is not None else NEG_INF
    firings, late_rows, elems = compute_windows_with_elements(
        window_rows, stream_values, cfg, new_from_ms=clock.start_ms if carried is not None else None,
        carried_wm=w0 if carried is not None else None,
        fire_lookup=lookup_for(spark, timeline, cfg.window, carried_rows_in),
        partitions=windows_partitions(spark, cfg),
        with_cause=with_cause)
    result = EngineResult(windows=firings, late_events=late_rows, watermarks=timeline.watermarks,
                          watermarks_from_driver=timeline.watermarks_from_driver)
    if clock.id is None:
        return result, None
    return result, _end_state(cfg, rows, carried, w0, all_splits, _top_watermark(timeline, stream_values), end,
                              window_rows, elems, clean_max_offsets)


def _top_watermark(timeline, stream_values: "DataFrame") -> int | None:
    """The range's highest stream watermark (None: no value): from the driver's own values when the timeline was
    computed there (a Spark job less per range), else one aggregate."""
    known = timeline.known_stream_values
    if known is not None:
        return int(known.max()) if len(known) else None
    return stream_values.agg(F.max("watermark")).collect()[0][0]


def _end_state(cfg, rows, carried, w0, all_splits, top, end, window_rows, elems, clean_max_offsets):
    """The Carry at the end of an event-time range that started at stream watermark `w0` and rose to `top` (None:
    no value): one small collect on the driver, the rest stays in DataFrames."""
    w_end = max(w0, top) if top is not None else w0
    last = end.stream_last.collect() if end.stream_last is not None else []  # at most one row
    idle_end = bool(last[0][0]) if last else (carried.stream_idle if carried else False)
    return Carry(origin_tick=end.origin_tick, stream_watermark=w_end, stream_idle=idle_end, splits=all_splits,
                 last_offsets=last_offsets_after(rows, carried, clean_max_offsets), split_states=end.splits,
                 rows=carried_rows(window_rows, elems, cfg, w_end))


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


def release(spark: "SparkSession") -> None:
    """Drop what replay() cached (the session's whole cache: one job per session)."""
    spark.catalog.clearCache()
