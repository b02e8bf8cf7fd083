"""Per-event emission: a split publishes after every row, so each row that raises its split's running max is a
change point, and the stream needs no tick grid.

Per split, after each of its rows it publishes its running max - lag; a change point where that grows (a carried
split starts from its published value: a pseudo change point just before the range). The stream reaches a value
`v` at the position g(v) = max over change points c with previous_value(c) < v of position(c) (each split's
values only grow): one sort by value and a running max. Each row's `wm_before` is then the largest move strictly
before it in replay order. Both scans are two-level (per bucket, then a tiny prefix over the bucket maxima), so no
window ever puts all rows into one partition. A declared split that never publishes holds the stream at -inf.
"""
from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from ...semantics.config import JobConfig
from ..contract import NEG_INF, Timeline
from .carry import TimelineCarry, TimelineEnd
from .frames import bucket_width, checkpoint, lit, scan_max, stream_values_const, watermarks_frame, with_rows_watermark


def per_event(rows: DataFrame, cfg: JobConfig, main_splits: list[str], side: set[str], initial: int,
              start_ms: int, carry: TimelineCarry | None) -> tuple[Timeline, TimelineEnd]:
    cols = rows.columns
    prev0 = carry.stream_wm if carry is not None else NEG_INF
    first_init = initial  # the side inputs' start value: reported once, at the history's first row
    initial = max(initial, prev0)
    cp = checkpoint(_change_points(rows, main_splits, cfg.watermark.lag_ms, start_ms, carry))
    own = cp.filter(F.col("arrival_time") >= start_ms) if carry is not None else cp
    end_state = TimelineEnd(splits=cp.groupBy("split").agg(F.max("published").alias("m"))
                            .select("split", F.lit(None).cast("long").alias("t"), "m"),
                            origin_tick=None, stream_last=None)
    split_out = own.select(F.col("arrival_time").alias("replay_time"), F.lit("split").alias("scope"), "split",
                           F.col("published").alias("watermark"), F.lit(False).alias("idle"))
    stats = _stats(cp)
    if not (main_splits and stats["n"] == len(main_splits)):
        return _never_all_published(rows, cols, split_out, first_init, initial, prev0), end_state
    moves = checkpoint(_stream_moves(cp, stats, prev0))
    stream_out = moves.select(F.col("moved_at.arrival_time").alias("replay_time"), F.lit("stream").alias("scope"),
                              F.lit(None).cast("string").alias("split"), F.col("stream_watermark").alias("watermark"),
                              F.lit(False).alias("idle"))
    return (Timeline(rows=_rows_wm_before(rows, cols, moves, stats, initial),
                     watermarks=watermarks_frame(split_out.unionByName(stream_out)),
                     stream_values=moves.select(F.col("stream_watermark").alias("watermark")).distinct()), end_state)


def _change_points(rows: DataFrame, main_splits: list[str], lag: int, start_ms: int,
                   carry: TimelineCarry | None) -> DataFrame:
    """split, arrival_time, offset, v (the value published), pv (the split's value before)."""
    per_split = Window.partitionBy("split").orderBy("arrival_time", "offset")
    main_rows = rows.filter(F.col("split").isin(main_splits))
    if carry is not None:
        carried = (carry.splits.filter(F.col("split").isin(main_splits))
                   .select("split", F.col("m").alias("_carried_watermark")))
        main_rows = main_rows.join(F.broadcast(carried), "split", "left")
    else:
        main_rows = main_rows.withColumn("_carried_watermark", lit(NEG_INF))
    cv = F.coalesce(F.col("_carried_watermark"), lit(NEG_INF))
    running_max = F.max("event_time").over(per_split.rowsBetween(Window.unboundedPreceding, 0))
    own = (main_rows.withColumn("published", F.greatest(running_max - lag, cv))
           .withColumn("published_before", F.coalesce(F.lag("published").over(per_split), cv))
           .filter(F.col("published") > F.col("published_before"))
           .select("split", "arrival_time", "offset", "published", "published_before"))
    if carry is None:
        return own
    return own.unionByName(carried.select("split", lit(start_ms - 1).alias("arrival_time"), lit(-1).alias("offset"),
                                          F.col("_carried_watermark").alias("published"),
                                          lit(NEG_INF).alias("published_before")))


def _stats(cp: DataFrame):
    """One small aggregate: how many splits published, the smallest final value, the value and arrival ranges
    (bucket widths of the two-level scans)."""
    per_split = cp.groupBy("split").agg(
        F.max("published").alias("last_published"), F.min("published").alias("published_lo"),
        F.min("arrival_time").alias("arrival_lo"), F.max("arrival_time").alias("arrival_hi"))
    return (per_split.agg(
        F.count("*").alias("n"), F.min("last_published").alias("min_last_published"),
        F.min("published_lo").alias("published_lo"), F.max("last_published").alias("published_hi"),
        F.min("arrival_lo").alias("arrival_lo"), F.max("arrival_hi").alias("arrival_hi"))
            .collect()[0])


def _never_all_published(rows: DataFrame, cols: list[str], split_out: DataFrame, first_init: int, initial: int,
                         prev0: int) -> Timeline:
    """A declared split that never publishes holds the stream at -inf (or only side inputs: +inf from the
    history's first row)."""
    if first_init != NEG_INF and first_init > prev0:
        first = rows.orderBy("arrival_time", "split", "offset").limit(1)
        split_out = split_out.unionByName(first.select(
            F.col("arrival_time").alias("replay_time"), F.lit("stream").alias("scope"),
            F.lit(None).cast("string").alias("split"), lit(initial).alias("watermark"), F.lit(False).alias("idle")))
    return Timeline(rows=with_rows_watermark(rows, cols, initial), watermarks=watermarks_frame(split_out),
                    stream_values=stream_values_const(rows.sparkSession, initial, prev0))


def _stream_moves(cp: DataFrame, stats, prev0: int) -> DataFrame:
    """(moved_at, stream_watermark): at that position the stream moves to that value. Queries (a published value)
    sort before points (the value published before) at equal values, so the running max takes strictly smaller
    values only; at a position the stream moves to the largest value reached there (positions are monotone in the
    value, so these only grow). Moves to values the carried history already reached are not repeated."""
    vw = bucket_width(stats["published_lo"], stats["published_hi"])
    points = cp.select(F.col("published_before").alias("_value"), F.lit(1).alias("_kind"),
                       F.struct("arrival_time", "split", "offset").alias("position"))
    queries = cp.filter(F.col("published") <= stats["min_last_published"]).select(
        F.col("published").alias("_value"), F.lit(0).alias("_kind"),
        F.lit(None).cast(points.schema["position"].dataType).alias("position"))
    scanned = scan_max(points.unionByName(queries).withColumn("_b", F.expr(f"_value div {vw}")), "_b",
                       [F.col("_value"), F.col("_kind")], "position", "moved_at")
    return (scanned.filter(F.col("_kind") == 0).groupBy("moved_at").agg(F.max("_value").alias("stream_watermark"))
            .filter(F.col("stream_watermark") > lit(max(NEG_INF, prev0))))


def _rows_wm_before(rows: DataFrame, cols: list[str], moves: DataFrame, stats, initial: int) -> DataFrame:
    """wm_before: the largest move strictly before the row (a row sorts before a move at its own position)."""
    aw = bucket_width(stats["arrival_lo"], stats["arrival_hi"])  # any monotone bucketing is exact
    tagged_rows = (rows.withColumn("_pos", F.struct("arrival_time", "split", "offset"))
                   .withColumn("_kind", F.lit(0)).withColumn("_stream_watermark", lit(None)))
    tagged_moves = moves.select(F.col("moved_at").alias("_pos"), F.lit(1).alias("_kind"),
                                F.col("stream_watermark").alias("_stream_watermark"))
    both = (tagged_rows.unionByName(tagged_moves, allowMissingColumns=True)
            .withColumn("_b", F.expr(f"_pos.arrival_time div {aw}")))
    scanned = scan_max(both, "_b", [F.col("_pos"), F.col("_kind")], "_stream_watermark", "_wm")
    return scanned.filter(F.col("_kind") == 0).select(*cols, F.coalesce(F.col("_wm"), lit(initial)).alias("wm_before"))
