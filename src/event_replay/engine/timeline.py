"""Stage 1 of the Spark engine: the watermark timeline (SEMANTICS §2–4), set-based.

Nothing walks the rows one by one. Per split, window functions give the running max and, for periodic
emission, one record per (split, tick with rows): its max timestamp (with silence advance as a max-plus
prefix scan), how long it stays active and when it goes idle. Those give every change of every split as
a small table on the tick timeline. The stream is then the running max of the candidate over the ticks
where some split changes (a grid of change ticks x splits, forward-filled per split).

Per-event emission has a change point per row, so it avoids the grid: the stream reaches a value `v`
at the position g(v) = max over change points c with prev_value(c) < v of pos(c) (each split's values only
grow), which is one sort by value and a running max. Scans over rows are two-level (per bucket, then a
tiny prefix over the bucket maxima), so no window ever puts all rows into one partition.

The semantics follow the reference model (`event_replay.semantics.reference`), including its side-input
rule: side inputs publish +inf from the start and are never idle, so with a side input declared the
stream is never idle, and when every other split is idle the stream moves to +inf.
"""
from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..semantics.config import JobConfig
from .contract import NEG_INF, POS_INF, Timeline

WATERMARKS_SCHEMA = T.StructType([
    T.StructField("replay_time", T.LongType(), False),
    T.StructField("scope", T.StringType(), False),
    T.StructField("split", T.StringType(), True),
    T.StructField("watermark", T.LongType(), True),
    T.StructField("idle", T.BooleanType(), False),
])
STREAM_VALUES_SCHEMA = T.StructType([T.StructField("watermark", T.LongType(), False)])

_N_BUCKETS = 64  # buckets of a two-level scan: enough parallelism, a tiny prefix table


def _lit(v: int) -> Column:
    return F.lit(v).cast("long")


def _scan_max(df: DataFrame, bucket: str, order: list[Column], val: str, out: str) -> DataFrame:
    """`out` = max of `val` over every row at or before this one in the order (bucket, *order).

    `bucket` must be non-decreasing along the order. Within a bucket a partitioned window; across buckets
    the maxima of the earlier buckets (one row per bucket), so no single-partition window over all rows."""
    w = Window.partitionBy(bucket).orderBy(*order).rowsBetween(Window.unboundedPreceding, Window.currentRow)
    local = df.withColumn("_scan_local", F.max(val).over(w))
    carry = (df.groupBy(bucket).agg(F.max(val).alias("_scan_bmax"))
             .withColumn("_scan_carry", F.max("_scan_bmax").over(
                 Window.orderBy(bucket).rowsBetween(Window.unboundedPreceding, -1)))
             .select(bucket, "_scan_carry"))
    return (local.join(F.broadcast(carry), bucket, "left")
            .withColumn(out, F.greatest("_scan_local", "_scan_carry"))
            .drop("_scan_local", "_scan_carry"))


def _bucket_width(lo: int | None, hi: int | None) -> int:
    if lo is None or hi is None:
        return 1
    return max(1, (hi - lo) // _N_BUCKETS + 1)


def _empty(df: DataFrame, schema: T.StructType) -> DataFrame:
    return df.sparkSession.createDataFrame([], schema)


def _watermarks_frame(df: DataFrame) -> DataFrame:
    return df.select(F.col("replay_time").cast("long"), F.col("scope").cast("string"),
                     F.col("split").cast("string"), F.col("watermark").cast("long"),
                     F.col("idle").cast("boolean"))


def compute_timeline(rows: DataFrame, cfg: JobConfig, splits: list[str], start_ms: int, end_ms: int) -> Timeline:
    """The stream watermark before every row, the watermark changes and the values the stream moved to.

    `splits` is the full declared split list (sorted, with side inputs); `rows` are cut to the range."""
    side = set(cfg.source.side_inputs)
    main_splits = sorted(s for s in splits if s not in side)
    has_side = any(s in side for s in splits)
    # A side input publishes +inf when it is created; with no other split that is the stream's value at once.
    initial = POS_INF if (not main_splits and has_side) else NEG_INF
    if cfg.watermark.periodic:
        return _periodic(rows, cfg, main_splits, has_side, initial, start_ms, end_ms)
    return _per_event(rows, cfg, main_splits, side, initial)


# ---------------------------------------------------------------------------------------------------------
# periodic emission


def _periodic(rows: DataFrame, cfg: JobConfig, main_splits: list[str], has_side: bool, initial: int,
              start_ms: int, end_ms: int) -> Timeline:
    spark = rows.sparkSession
    wmc = cfg.watermark
    interval, lag = wmc.interval_ms, wmc.lag_ms
    first_tick = -(-start_ms // interval) * interval
    cols = rows.columns
    # The tick a row is published at: the first tick at or after its arrival (a tick at the same instant
    # comes after the row); rows before the first tick are published at the first tick.
    a = F.col("arrival_time")
    rows = rows.withColumn("_tick", F.greatest(_lit(first_tick), a + F.pmod(-a, _lit(interval))))
    if first_tick >= end_ms:  # no tick in the range: nothing is ever published
        return Timeline(rows=rows.select(*cols, _lit(initial).alias("wm_before")),
                        watermarks=_empty(rows, WATERMARKS_SCHEMA),
                        stream_values=_stream_values_const(spark, initial))
    last_tick = (end_ms - 1) // interval * interval
    end_bound = last_tick + interval  # exclusive bound of the tick timeline

    if not main_splits:
        # Only side inputs: the stream is +inf (or -inf without any split) from the start.
        changes = spark.createDataFrame([(first_tick, "stream", None, initial, False)], WATERMARKS_SCHEMA) \
            if initial != NEG_INF else _empty(rows, WATERMARKS_SCHEMA)
        return Timeline(rows=rows.select(*cols, _lit(initial).alias("wm_before")), watermarks=changes,
                        stream_values=_stream_values_const(spark, initial))

    split_changes = _split_changes(rows, cfg, main_splits, first_tick, last_tick, end_bound)
    split_changes = split_changes.persist()

    # --- the stream at every change tick: grid of change ticks x splits, forward-filled per split.
    # Size: (ticks where some split changes) x (splits), at most the range's ticks x splits. Fine for
    # Kafka-sized split counts; for thousands of sparse splits a dyadic (segment-tree) min would be O(C log C).
    change_ticks = (split_changes.select("T").union(spark.createDataFrame([(first_tick,)], "T long"))
                    .distinct())
    split_df = spark.createDataFrame([(s,) for s in main_splits], "split string")
    wsplit = Window.partitionBy("split").orderBy("T").rowsBetween(Window.unboundedPreceding, Window.currentRow)
    grid = (change_ticks.crossJoin(F.broadcast(split_df))
            .join(split_changes.select("split", "T", "val", "idle"), ["split", "T"], "left")
            .withColumn("val", F.coalesce(F.last("val", ignorenulls=True).over(wsplit), _lit(NEG_INF)))
            .withColumn("idle", F.coalesce(F.last("idle", ignorenulls=True).over(wsplit), F.lit(False))))
    per_tick = grid.groupBy("T").agg(
        F.sum(F.when(~F.col("idle"), 1).otherwise(0)).alias("n_active"),
        F.min(F.when(~F.col("idle"), F.col("val"))).alias("min_active"),
        F.max("val").alias("max_all"))  # val of an idle split is its last published value
    # Reference/Flink 2.3: min over the active splits; all idle: the largest published value (stream idle);
    # a side input is never idle and counts +inf, so with one the stream is never idle.
    candidate = (F.when(F.col("n_active") > 0, F.col("min_active"))
                 .otherwise(_lit(POS_INF) if has_side else F.col("max_all")))
    stream_idle = (F.col("n_active") == 0) & F.lit(not has_side)
    wt = Window.orderBy("T")  # the tick timeline: a change tick per row at most, small next to the rows
    stream = (per_tick.withColumn("c", candidate).withColumn("s_idle", stream_idle)
              .withColumn("W", F.greatest(F.max("c").over(wt.rowsBetween(Window.unboundedPreceding, 0)),
                                          _lit(initial)))
              .withColumn("prevW", F.coalesce(F.lag("W").over(wt), _lit(NEG_INF)))
              .withColumn("prev_idle", F.coalesce(F.lag("s_idle").over(wt), F.lit(False)))
              .select("T", "W", "s_idle", "prevW", "prev_idle")).persist()

    stream_changes = stream.filter((F.col("W") != F.col("prevW")) | (F.col("s_idle") != F.col("prev_idle"))) \
        .select(F.col("T").alias("replay_time"), F.lit("stream").alias("scope"), F.lit(None).cast("string").alias("split"),
                F.when(F.col("s_idle"), _lit(None)).otherwise(F.col("W")).alias("watermark"),
                F.col("s_idle").alias("idle"))
    split_out = split_changes.select(F.col("T").alias("replay_time"), F.lit("split").alias("scope"), "split",
                                     F.when(F.col("idle"), _lit(None)).otherwise(F.col("val")).alias("watermark"),
                                     "idle")
    watermarks = _watermarks_frame(split_out.unionByName(stream_changes))
    stream_values = stream.filter(F.col("W") > F.col("prevW")).select(F.col("W").alias("watermark")).distinct()

    # --- rows meet the timeline: the stream after the last tick before the row (an as-of lookup on the
    # small tick timeline, then an equi-join on that tick).
    rows = rows.withColumn("_prev", F.col("_tick") - _lit(interval))
    asks = rows.select(F.col("_prev").alias("T")).filter(F.col("T") >= first_tick).distinct() \
        .withColumn("W", _lit(None)).withColumn("_kind", F.lit(1))
    known = stream.select("T", "W").withColumn("_kind", F.lit(0))
    lookup = (known.unionByName(asks)
              .withColumn("W", F.last("W", ignorenulls=True).over(
                  Window.orderBy("T", "_kind").rowsBetween(Window.unboundedPreceding, 0)))
              .filter(F.col("_kind") == 1).select(F.col("T").alias("_prev"), F.col("W").alias("_W")))
    out_rows = (rows.join(lookup, "_prev", "left")
                .select(*cols, F.coalesce(F.col("_W"), _lit(initial)).alias("wm_before")))
    return Timeline(rows=out_rows, watermarks=watermarks, stream_values=stream_values)


def _stream_values_const(spark, initial: int) -> DataFrame:
    return spark.createDataFrame([(initial,)] if initial != NEG_INF else [], STREAM_VALUES_SCHEMA)


def _split_changes(rows: DataFrame, cfg: JobConfig, main_splits: list[str], first_tick: int, last_tick: int,
                   end_bound: int) -> DataFrame:
    """Every change of every (non-side) split's (watermark, idle) pair on the tick timeline:
    split, T, val (the published value; for an idle split its last published value), idle."""
    spark = rows.sparkSession
    wmc = cfg.watermark
    interval, lag = wmc.interval_ms, wmc.lag_ms
    idle_on = wmc.idle_timeout_ms is not None
    silence_on = wmc.advance_after_silence_ms is not None
    # Idleness: a split with rows at tick t is active at t and t+I (inactivity starts), then idle at the
    # first tick T with T - (t+I) > timeout, i.e. at t + I + D: it is active for `span` ticks from t.
    d_ticks = (wmc.idle_timeout_ms // interval + 1) if idle_on else None  # D / I
    span = 1 + d_ticks if idle_on else None
    # Silence advance: at the k-th active tick after its rows, logical = M + k*I; it advances when k*I > wait.
    k0 = (wmc.advance_after_silence_ms // interval + 1) if silence_on else None

    groups = (rows.filter(F.col("split").isin(main_splits) & (F.col("_tick") <= last_tick))
              .groupBy("split", F.col("_tick").alias("t")).agg(F.max("event_time").alias("E")))
    ws = Window.partitionBy("split").orderBy("t")
    g = groups.withColumn("next_t", F.coalesce(F.lead("t").over(ws), _lit(end_bound))) \
        .withColumn("n_ticks", F.expr(f"(next_t - t) div {interval}"))
    g = g.withColumn("n_act", F.least(F.col("n_ticks"), _lit(span)) if idle_on else F.col("n_ticks"))
    if silence_on:
        # max_ts after the rows of group i: M_i = max(M_{i-1} + adv_{i-1}, E_i), a max-plus recurrence with
        # the closed form M_i = A_i + max_{j<=i}(E_j - A_j), A_i = sum of the advances before group i.
        g = g.withColumn("adv", F.when(F.col("n_act") >= k0, F.col("n_act") * interval).otherwise(_lit(0)))
        g = g.withColumn("A", F.coalesce(F.sum("adv").over(ws.rowsBetween(Window.unboundedPreceding, -1)),
                                         _lit(0)))
        g = g.withColumn("M", F.col("A") + F.max(F.col("E") - F.col("A")).over(
            ws.rowsBetween(Window.unboundedPreceding, 0)))
        g = g.withColumn("last_pub", F.when(F.col("n_act") >= k0, F.col("M") + F.col("n_act") * interval - lag)
                         .otherwise(F.col("M") - lag))
    else:
        g = g.withColumn("M", F.max("E").over(ws.rowsBetween(Window.unboundedPreceding, 0)))
        g = g.withColumn("last_pub", F.col("M") - lag)
    g = g.persist()

    first_val = F.col("M") - lag + (interval if (silence_on and k0 == 1) else 0)
    events = [g.select("split", F.col("t").alias("T"), first_val.alias("val"), F.lit(False).alias("idle"))]
    if silence_on:
        kstart = max(k0, 2)
        ramp = (g.filter(F.col("n_act") >= kstart)
                .select("split", "t", "M", F.explode(F.sequence(_lit(kstart), F.col("n_act"))).alias("k"))
                .select("split", (F.col("t") + (F.col("k") - 1) * interval).alias("T"),
                        (F.col("M") + F.col("k") * interval - lag).alias("val"), F.lit(False).alias("idle")))
        events.append(ramp)
    if idle_on:
        events.append(g.filter(F.col("n_ticks") > span)
                      .select("split", (F.col("t") + span * interval).alias("T"), F.col("last_pub").alias("val"),
                              F.lit(True).alias("idle")))
        # Before a split's first row (the first tick counts as "no rows since the previous tick").
        idle0 = first_tick + d_ticks * interval
        firsts = g.groupBy("split").agg(F.min("t").alias("t1"))
        split_df = spark.createDataFrame([(s,) for s in main_splits], "split string")
        events.append(split_df.join(firsts, "split", "left")
                      .filter(F.coalesce(F.col("t1"), _lit(end_bound)) > idle0)
                      .select("split", _lit(idle0).alias("T"), _lit(NEG_INF).alias("val"),
                              F.lit(True).alias("idle")))
    ev = events[0]
    for e in events[1:]:
        ev = ev.unionByName(e)
    wsp = Window.partitionBy("split").orderBy("T")
    ev = (ev.withColumn("_pv", F.coalesce(F.lag("val").over(wsp), _lit(NEG_INF)))
          .withColumn("_pi", F.coalesce(F.lag("idle").over(wsp), F.lit(False))))
    # Only changes of the (watermark, idle) pair, starting from (-inf, not idle).
    return ev.filter((F.col("val") != F.col("_pv")) | (F.col("idle") != F.col("_pi"))).drop("_pv", "_pi")


# ---------------------------------------------------------------------------------------------------------
# per-event emission


def _per_event(rows: DataFrame, cfg: JobConfig, main_splits: list[str], side: set[str], initial: int) -> Timeline:
    spark = rows.sparkSession
    lag = cfg.watermark.lag_ms
    cols = rows.columns
    pos = F.struct("arrival_time", "split", "offset")  # replay order

    # Per split, after each of its rows it publishes its running max - lag; a change point where it grows.
    ws = Window.partitionBy("split").orderBy("arrival_time", "offset")
    cp = (rows.filter(F.col("split").isin(main_splits))
          .withColumn("v", F.max("event_time").over(ws.rowsBetween(Window.unboundedPreceding, 0)) - lag)
          .withColumn("pv", F.coalesce(F.lag("v").over(ws), _lit(NEG_INF)))
          .filter(F.col("v") > F.col("pv"))
          .select("split", "arrival_time", "offset", "v", "pv")).persist()

    split_out = cp.select(F.col("arrival_time").alias("replay_time"), F.lit("split").alias("scope"), "split",
                          F.col("v").alias("watermark"), F.lit(False).alias("idle"))

    # One small aggregate: how many splits published, the smallest final value, the value and arrival ranges
    # (bucket widths of the two-level scans).
    stats = (cp.groupBy("split").agg(F.max("v").alias("vmax"), F.min("v").alias("vlo"),
                                     F.min("arrival_time").alias("alo"), F.max("arrival_time").alias("ahi"))
             .agg(F.count("*").alias("n"), F.min("vmax").alias("vmin"), F.min("vlo").alias("vlo"),
                  F.max("vmax").alias("vhi"), F.min("alo").alias("alo"), F.max("ahi").alias("ahi"))
             .collect()[0])
    all_published = main_splits and stats["n"] == len(main_splits)

    if not all_published:
        # A declared split that never publishes holds the stream at -inf (or only side inputs: +inf from the start).
        if initial != NEG_INF:
            first = rows.orderBy("arrival_time", "split", "offset").limit(1)
            stream_out = first.select(F.col("arrival_time").alias("replay_time"), F.lit("stream").alias("scope"),
                                      F.lit(None).cast("string").alias("split"), _lit(initial).alias("watermark"),
                                      F.lit(False).alias("idle"))
            split_out = split_out.unionByName(stream_out)
        return Timeline(rows=rows.select(*cols, _lit(initial).alias("wm_before")),
                        watermarks=_watermarks_frame(split_out),
                        stream_values=_stream_values_const(spark, initial))
    vmin = stats["vmin"]

    # The stream reaches v (<= vmin) at g(v) = max pos of the change points whose previous value is < v:
    # queries (v) sort before points (pv) at equal keys, so the running max takes strictly smaller pv only.
    vw = _bucket_width(stats["vlo"], stats["vhi"])
    points = cp.select(F.col("pv").alias("key"), F.lit(1).alias("_kind"),
                       F.struct("arrival_time", "split", "offset").alias("pos"))
    queries = cp.filter(F.col("v") <= vmin).select(F.col("v").alias("key"), F.lit(0).alias("_kind"),
                                                   F.lit(None).cast(points.schema["pos"].dataType).alias("pos"))
    scanned = _scan_max(points.unionByName(queries).withColumn("_b", F.expr(f"key div {vw}")), "_b",
                        [F.col("key"), F.col("_kind")], "pos", "g")
    # At g the stream moves to the largest value reached there (g is monotone in v, so these only grow).
    moves = (scanned.filter(F.col("_kind") == 0).groupBy("g").agg(F.max("key").alias("V"))
             .filter(F.col("V") > _lit(NEG_INF))).persist()
    stream_out = moves.select(F.col("g.arrival_time").alias("replay_time"), F.lit("stream").alias("scope"),
                              F.lit(None).cast("string").alias("split"), F.col("V").alias("watermark"), F.lit(False).alias("idle"))
    watermarks = _watermarks_frame(split_out.unionByName(stream_out))
    stream_values = moves.select(F.col("V").alias("watermark")).distinct()

    # wm_before: the largest move strictly before the row (a row sorts before a move at its own position).
    aw = _bucket_width(stats["alo"], stats["ahi"])  # any monotone bucketing is exact
    tagged_rows = rows.withColumn("_pos", pos).withColumn("_kind", F.lit(0)).withColumn("_V", _lit(None))
    tagged_moves = moves.select(F.col("g").alias("_pos"), F.lit(1).alias("_kind"), F.col("V").alias("_V"))
    both = tagged_rows.unionByName(tagged_moves, allowMissingColumns=True) \
        .withColumn("_b", F.expr(f"_pos.arrival_time div {aw}"))
    scanned_rows = _scan_max(both, "_b", [F.col("_pos"), F.col("_kind")], "_V", "_wm")
    out_rows = scanned_rows.filter(F.col("_kind") == 0) \
        .select(*cols, F.coalesce(F.col("_wm"), _lit(initial)).alias("wm_before"))
    return Timeline(rows=out_rows, watermarks=watermarks, stream_values=stream_values)
