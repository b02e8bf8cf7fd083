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

Partition replay (SEMANTICS §6 `hold`) continues from a `TimelineCarry`: per split its last row group before
the previous partition's last tick, as (t, M) with M the max timestamp after it, plus its group at the tick just
after (rows that arrived after the last tick, raw max E), and the stream's watermark and idle flag. The closed
forms regenerate every split's changes from those pseudo-groups; the ones before the partition's first tick are
only used to seed each split's state there (they were already emitted), so the outputs are exactly those of one
replay of the whole history.

The semantics follow the reference model (`event_replay.semantics.reference`), including its side-input
rule: side inputs publish +inf from the start and are never idle, so with a side input declared the
stream is never idle, and when every other split is idle the stream moves to +inf.
"""
from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..semantics.config import JobConfig
from .contract import (NEG_INF, POS_INF, SPLIT_STATE_SCHEMA, STREAM_VALUES_SCHEMA, WATERMARKS_SCHEMA,
                       Timeline)



@dataclass
class TimelineCarry:
    """What the timeline continues from (state.py stores it): see the module doc."""
    origin_tick: int | None  # the history's first tick: a split with no rows yet goes idle counting from it
    stream_wm: int
    stream_idle: bool
    splits: DataFrame  # split, t, m (periodic: pseudo-groups; per-event: t null, m = the split's watermark)


@dataclass
class TimelineEnd:
    """The timeline's part of the state a partition leaves."""
    splits: DataFrame  # SPLIT_STATE_SCHEMA
    origin_tick: int | None
    stream_last: DataFrame | None  # at most one row, `s_idle`: the stream's idle flag at the end (None: unchanged)

_N_BUCKETS = 64  # buckets of a two-level scan: enough parallelism, a tiny prefix table
_TICKS_BROADCAST_MAX = 1_000_000  # the tick -> stream watermark lookup is broadcast up to this many ticks


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


def _checkpoint(df: DataFrame) -> DataFrame:
    """A small intermediate frame read by several later queries: computed once, with a plan that starts here.
    (A persist() would keep its whole lineage, which every later plan inlines and re-optimises: the watermarks
    plan grew to ~700 exchanges that way.)"""
    return df.localCheckpoint(eager=True)


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
    return compute_timeline_carried(rows, cfg, splits, start_ms, end_ms, None)[0]


def compute_timeline_carried(rows: DataFrame, cfg: JobConfig, splits: list[str], start_ms: int, end_ms: int,
                             carry: TimelineCarry | None) -> tuple[Timeline, TimelineEnd]:
    """compute_timeline continuing from `carry` (None: the start of a history), and the state it ends in.
    With a carry, only the changes at or after the range's first tick (rows: at or after start_ms) come out and
    stream_values holds only values above the carried stream watermark."""
    side = set(cfg.source.side_inputs)
    main_splits = sorted(s for s in splits if s not in side)
    has_side = any(s in side for s in splits)
    # A side input publishes +inf when it is created; with no other split that is the stream's value at once.
    initial = POS_INF if (not main_splits and has_side) else NEG_INF
    if cfg.watermark.periodic:
        return _periodic(rows, cfg, main_splits, has_side, initial, start_ms, end_ms, carry)
    return _per_event(rows, cfg, main_splits, side, initial, start_ms, carry)


# ---------------------------------------------------------------------------------------------------------
# periodic emission


def _periodic(rows: DataFrame, cfg: JobConfig, main_splits: list[str], has_side: bool, initial: int,
              start_ms: int, end_ms: int, carry: TimelineCarry | None) -> tuple[Timeline, TimelineEnd]:
    spark = rows.sparkSession
    interval = cfg.watermark.interval_ms
    first_tick = -(-start_ms // interval) * interval
    origin = carry.origin_tick if carry is not None and carry.origin_tick is not None else first_tick
    # Before the range: the carried stream (never below the side inputs' +inf start).
    prev0 = carry.stream_wm if carry is not None else NEG_INF
    prev_idle0 = carry.stream_idle if carry is not None else False
    initial = max(initial, prev0)
    no_state = _empty(rows, SPLIT_STATE_SCHEMA)
    cols = rows.columns
    # The tick a row is published at: the first tick at or after its arrival (a tick at the same instant
    # comes after the row); rows before the first tick are published at the first tick.
    a = F.col("arrival_time")
    rows = rows.withColumn("_tick", F.greatest(_lit(first_tick), a + F.pmod(-a, _lit(interval))))
    if first_tick >= end_ms:  # no tick in the range: nothing is ever published
        if carry is not None:
            raise ValueError(f"the range [{start_ms}, {end_ms}) holds no watermark tick (interval {interval} ms): "
                             "a partition must be at least one interval long to carry state")
        return (Timeline(rows=rows.select(*cols, _lit(initial).alias("wm_before")),
                         watermarks=_empty(rows, WATERMARKS_SCHEMA),
                         stream_values=_stream_values_const(spark, initial, prev0)),
                TimelineEnd(splits=no_state, origin_tick=None, stream_last=None))
    last_tick = (end_ms - 1) // interval * interval
    end_bound = last_tick + interval  # exclusive bound of the tick timeline

    if not main_splits:
        # Only side inputs: the stream is +inf (or -inf without any split) from the start.
        changes = spark.createDataFrame([(first_tick, "stream", None, initial, False)], WATERMARKS_SCHEMA) \
            if initial != prev0 else _empty(rows, WATERMARKS_SCHEMA)
        return (Timeline(rows=rows.select(*cols, _lit(initial).alias("wm_before")), watermarks=changes,
                         stream_values=_stream_values_const(spark, initial, prev0)),
                TimelineEnd(splits=no_state, origin_tick=origin, stream_last=None))

    driver = _periodic_on_driver(rows.select(*cols), cfg, main_splits, has_side, initial, prev0, prev_idle0,
                                 first_tick, last_tick, origin, carry)
    if driver is not None:
        return driver
    pseudo = carry.splits if carry is not None else None
    all_changes, groups = _split_changes(rows, cfg, main_splits, first_tick, last_tick, end_bound, origin, pseudo)
    all_changes = _checkpoint(all_changes)
    split_changes = all_changes.filter(F.col("T").between(first_tick, last_tick))
    # Each split's state just before the first tick (carried history): its last change before it, moved to the
    # first tick unless the split changes there anyway. Without a carry there is none.
    wlast = Window.partitionBy("split").orderBy(F.col("T").desc())
    seed = (all_changes.filter(F.col("T") < first_tick)
            .withColumn("_r", F.row_number().over(wlast)).filter(F.col("_r") == 1).drop("_r")
            .join(split_changes.filter(F.col("T") == first_tick).select("split"), "split", "left_anti")
            .withColumn("T", _lit(first_tick)))
    grid_changes = split_changes.unionByName(seed)

    # --- the stream at every change tick: grid of change ticks x splits, forward-filled per split.
    # Size: (ticks where some split changes) x (splits), at most the range's ticks x splits. Fine for
    # Kafka-sized split counts; for thousands of sparse splits a dyadic (segment-tree) min would be O(C log C).
    change_ticks = (split_changes.select("T").union(spark.createDataFrame([(first_tick,)], "T long"))
                    .distinct())
    split_df = spark.createDataFrame([(s,) for s in main_splits], "split string")
    wsplit = Window.partitionBy("split").orderBy("T").rowsBetween(Window.unboundedPreceding, Window.currentRow)
    grid = (change_ticks.crossJoin(F.broadcast(split_df))
            .join(grid_changes.select("split", "T", "val", "idle"), ["split", "T"], "left")
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
              .withColumn("prevW", F.coalesce(F.lag("W").over(wt), _lit(prev0)))
              .withColumn("prev_idle", F.coalesce(F.lag("s_idle").over(wt), F.lit(prev_idle0)))
              .select("T", "W", "s_idle", "prevW", "prev_idle"))
    stream = _checkpoint(stream)

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
    n_ticks = (last_tick - first_tick) // interval + 1
    small = n_ticks <= _TICKS_BROADCAST_MAX
    if small:
        # Every tick of the range is asked (no pass over the rows to find the ticks they need), and the answer
        # is broadcast: the rows meet it where they are, with no shuffle.
        asks = spark.range(first_tick, last_tick + 1, interval).select(F.col("id").alias("T"))
    else:
        asks = rows.select(F.col("_prev").alias("T")).filter(F.col("T") >= first_tick).distinct()
    asks = asks.withColumn("W", _lit(None)).withColumn("_kind", F.lit(1))
    known = stream.select("T", "W").withColumn("_kind", F.lit(0))
    lookup = (known.unionByName(asks)
              .withColumn("W", F.last("W", ignorenulls=True).over(
                  Window.orderBy("T", "_kind").rowsBetween(Window.unboundedPreceding, 0)))
              .filter(F.col("_kind") == 1).select(F.col("T").alias("_prev"), F.col("W").alias("_W")))
    out_rows = (rows.join(F.broadcast(lookup) if small else lookup, "_prev", "left")
                .select(*cols, F.coalesce(F.col("_W"), _lit(initial)).alias("wm_before")))
    # The state to carry: per split its last group up to the last tick (M after it) and its group at the tick
    # after the range (rows published there, raw max E); the stream's idle flag at the last change tick.
    wg = Window.partitionBy("split").orderBy(F.col("t").desc())
    last_group = (groups.filter(F.col("t") <= last_tick).withColumn("_r", F.row_number().over(wg))
                  .filter(F.col("_r") == 1).select("split", "t", F.col("M").alias("m")))
    after = groups.filter(F.col("t") > last_tick).select("split", "t", F.col("E").alias("m"))
    end_splits = last_group.unionByName(after)
    last = stream.orderBy(F.col("T").desc()).select("s_idle").limit(1)
    return (Timeline(rows=out_rows, watermarks=watermarks, stream_values=stream_values),
            TimelineEnd(splits=end_splits, origin_tick=origin, stream_last=last))


def _periodic_on_driver(rows: DataFrame, cfg: JobConfig, main_splits: list[str], has_side: bool, initial: int,
                        prev0: int, prev_idle0: bool, first_tick: int, last_tick: int, origin: int,
                        carry: TimelineCarry | None) -> tuple[Timeline, TimelineEnd] | None:
    """The driver path (tick_timeline.py) when the per-(split, tick) aggregate is small enough; else None."""
    from .tick_timeline import collect_tick_table, end_split_state, periodic_on_driver

    table = collect_tick_table(rows, main_splits, first_tick, cfg.watermark.interval_ms)
    if table is None:
        return None
    pseudo = [(r["split"], r["t"], r["m"]) for r in carry.splits.collect()] if carry is not None else []
    done = periodic_on_driver(rows, cfg, table, main_splits, has_side, initial, prev0, prev_idle0, first_tick,
                              last_tick, origin, pseudo)
    spark = rows.sparkSession
    end_splits = spark.createDataFrame(end_split_state(done.groups, done.max_ts_after, last_tick, main_splits),
                                       SPLIT_STATE_SCHEMA)
    last = spark.createDataFrame([(bool(done.stream.idle[-1]),)], "s_idle boolean")
    return done.timeline, TimelineEnd(splits=end_splits, origin_tick=origin, stream_last=last)


def _stream_values_const(spark, initial: int, prev0: int = NEG_INF) -> DataFrame:
    return spark.createDataFrame([(initial,)] if initial > prev0 else [], STREAM_VALUES_SCHEMA)


def _split_changes(rows: DataFrame, cfg: JobConfig, main_splits: list[str], first_tick: int, last_tick: int,
                   end_bound: int, origin: int, pseudo: DataFrame | None) -> tuple[DataFrame, DataFrame]:
    """Every change of every (non-side) split's (watermark, idle) pair on the tick timeline:
    split, T, val (the published value; for an idle split its last published value), idle; and the per-split
    row groups (split, t, E, M). With carried pseudo-groups (before the first tick) the changes start there;
    changes after the last tick are left out. `origin`: the history's first tick."""
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

    # Rows after the last tick are published at end_bound (the next range's first tick): their group is kept
    # for the carried state (no change comes out of it here: it spans no tick of the range).
    groups = (rows.filter(F.col("split").isin(main_splits))
              .select("split", F.col("_tick").alias("t"), F.col("event_time").alias("E")))
    if pseudo is not None:
        groups = groups.unionByName(pseudo.filter(F.col("split").isin(main_splits))
                                    .select("split", "t", F.col("m").alias("E")))
    groups = groups.groupBy("split", "t").agg(F.max("E").alias("E"))
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
    g = _checkpoint(g)

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
        idle0 = origin + d_ticks * interval
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
    changes = ev.filter((F.col("val") != F.col("_pv")) | (F.col("idle") != F.col("_pi"))).drop("_pv", "_pi")
    return changes.filter(F.col("T") <= last_tick), g


# ---------------------------------------------------------------------------------------------------------
# per-event emission


def _per_event(rows: DataFrame, cfg: JobConfig, main_splits: list[str], side: set[str], initial: int,
               start_ms: int, carry: TimelineCarry | None) -> tuple[Timeline, TimelineEnd]:
    spark = rows.sparkSession
    lag = cfg.watermark.lag_ms
    cols = rows.columns
    pos = F.struct("arrival_time", "split", "offset")  # replay order
    prev0 = carry.stream_wm if carry is not None else NEG_INF
    first_init = initial  # the side inputs' start value: reported once, at the history's first row
    initial = max(initial, prev0)

    # Per split, after each of its rows it publishes its running max - lag; a change point where it grows.
    # A carried split starts from its published value `cv`: a pseudo change point just before the range.
    ws = Window.partitionBy("split").orderBy("arrival_time", "offset")
    main_rows = rows.filter(F.col("split").isin(main_splits))
    if carry is not None:
        carried = carry.splits.filter(F.col("split").isin(main_splits)).select("split", F.col("m").alias("_cv"))
        main_rows = main_rows.join(F.broadcast(carried), "split", "left")
    else:
        main_rows = main_rows.withColumn("_cv", _lit(NEG_INF))
    cv = F.coalesce(F.col("_cv"), _lit(NEG_INF))
    own = (main_rows
           .withColumn("v", F.greatest(F.max("event_time").over(ws.rowsBetween(Window.unboundedPreceding, 0)) - lag,
                                       cv))
           .withColumn("pv", F.coalesce(F.lag("v").over(ws), cv))
           .filter(F.col("v") > F.col("pv"))
           .select("split", "arrival_time", "offset", "v", "pv"))
    cp = own
    if carry is not None:
        cp = own.unionByName(carried.select("split", _lit(start_ms - 1).alias("arrival_time"),
                                            _lit(-1).alias("offset"), F.col("_cv").alias("v"),
                                            _lit(NEG_INF).alias("pv")))
    cp = _checkpoint(cp)
    own = cp.filter(F.col("arrival_time") >= start_ms) if carry is not None else cp
    end_state = TimelineEnd(splits=cp.groupBy("split").agg(F.max("v").alias("m"))
                            .select("split", F.lit(None).cast("long").alias("t"), "m"),
                            origin_tick=None, stream_last=None)

    split_out = own.select(F.col("arrival_time").alias("replay_time"), F.lit("split").alias("scope"), "split",
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
        if first_init != NEG_INF and first_init > prev0:
            first = rows.orderBy("arrival_time", "split", "offset").limit(1)
            stream_out = first.select(F.col("arrival_time").alias("replay_time"), F.lit("stream").alias("scope"),
                                      F.lit(None).cast("string").alias("split"), _lit(initial).alias("watermark"),
                                      F.lit(False).alias("idle"))
            split_out = split_out.unionByName(stream_out)
        return (Timeline(rows=rows.select(*cols, _lit(initial).alias("wm_before")),
                         watermarks=_watermarks_frame(split_out),
                         stream_values=_stream_values_const(spark, initial, prev0)), end_state)
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
    # Moves to values the stream had already reached are the carried history's (pseudo points): not repeated.
    moves = (scanned.filter(F.col("_kind") == 0).groupBy("g").agg(F.max("key").alias("V"))
             .filter(F.col("V") > _lit(max(NEG_INF, prev0))))
    moves = _checkpoint(moves)
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
    return Timeline(rows=out_rows, watermarks=watermarks, stream_values=stream_values), end_state
