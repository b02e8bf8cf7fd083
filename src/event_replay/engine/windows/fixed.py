"""Tumbling and sliding windows: assignment, then firings as one aggregate (SEMANTICS §5–6).

Every row carries `wm_before`, the stream watermark just before it, which never goes back in replay order
(arrival_time, split, offset). For a window with max timestamp `m = end - 1` and cleanup time `c = m + lateness`,
its rows split by `W = wm_before` into

    early          W < m       held by the window's first firing, its event-time timer at m (looked up later:
                               fire_lookup.py), and they all come first;
    late-accepted  m <= W < c  the j-th such row (in replay order) fires at once (`late_row`, fire watermark W)
                               with the early rows and late-accepted rows 1..j;
    dropped        c <= W      not added; a row dropped from all its windows is a late row.

Late-accepted rows are few (they arrive after their window fired and before it is purged), so the rows that are
not early in some window (`behind`) are materialised once; the late rows and the late-accepted elements come from
them. Firings are then one aggregate over slots: slot 0 of a window holds its early rows (the timer firing), slot
j >= 1 its early rows and late-accepted rows 1..j (its j-th late firing). The early rows of the few windows with
late firings are copied into each of their slots (a broadcast join on those windows). The aggregate is shuffled
by key straight into the windows output's partitions, so writing it needs no second shuffle.

That is exact when every aggregate is order-free (count, min, max, sum over integers); otherwise, or when the late
windows are many, the firings come from numbered elements and running aggregates in replay order (`_numbered`).
"""
from __future__ import annotations

import re

from pyspark.errors import AnalysisException
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from ...semantics.config import JobConfig, WindowConfig
from ...semantics.model import FIRE_LATE_ROW
from ..elements import ORDER, PENDING, POS, WE, WS, cleanup, firings_with_aggregates, single_call

# Slot aggregation is used up to this many late-accepted elements, and windows with at most this many late firings
# (each copies its window's early rows once per late firing); beyond, the numbered path.
_LATE_ELEMENTS_MAX = 200_000
_LATE_FIRINGS_PER_WINDOW_MAX = 64
_WID = ["key", WS, WE]


def slide_of(w: WindowConfig) -> int:
    return w.slide_ms if w.type == "sliding" else w.size_ms


def last_start(w: WindowConfig) -> Column:
    t = F.col("event_time")
    return t - F.pmod(t - F.lit(w.offset_ms), F.lit(slide_of(w)))  # Flink's getWindowStartWithOffset


def assign(rows: DataFrame, w: WindowConfig) -> DataFrame:
    """One element per (row, window holding its event time): the row's columns plus __ws, __we."""
    size, slide = w.size_ms, slide_of(w)
    n_windows = -(-size // slide)  # at most this many windows contain a timestamp
    if n_windows == 1:
        elems = rows.withColumn(WS, last_start(w))
    else:
        elems = (rows.withColumn("__k", F.explode(F.sequence(F.lit(0), F.lit(n_windows - 1))))
                 .withColumn(WS, last_start(w) - F.col("__k") * F.lit(slide))
                 .where(F.col(WS) > F.col("event_time") - F.lit(size)).drop("__k"))
    return elems.withColumn(WE, F.col(WS) + F.lit(size))


def _first_max_ts(w: WindowConfig) -> Column:
    """The smallest max timestamp among the windows holding the row's event time."""
    size, slide, last = w.size_ms, slide_of(w), last_start(w)
    k_max = F.floor((last - F.col("event_time") + F.lit(size - 1)) / F.lit(slide)).cast("long")
    return last - k_max * F.lit(slide) + F.lit(size - 1)


class FixedRows:
    """The rows of tumbling/sliding windows sorted into early elements, late-accepted elements and late rows."""

    def __init__(self, rows: DataFrame, cfg: JobConfig, input_cols: list[str]):
        w, wm = cfg.window, F.col("wm_before")
        lateness = w.allowed_lateness_ms
        self.early = assign(rows, w).where(wm < F.col(WE) - F.lit(1))
        # Not early in some window: late rows and late-accepted ones (few), computed once.
        self.behind = rows.where(wm >= _first_max_ts(w)).localCheckpoint(eager=True)
        last_max_ts = last_start(w) + F.lit(w.size_ms - 1)
        # A row is late iff its latest window (the largest max timestamp) is dropped: cleanup grows with the end.
        self.late_rows = (self.behind.where(wm >= cleanup(last_max_ts, lateness))
                          .select(*input_cols, wm.alias("late_watermark")))
        max_ts = F.col(WE) - F.lit(1)
        self.late_accepted = assign(self.behind, w).where((wm >= max_ts) & (wm < cleanup(max_ts, lateness)))

    @property
    def accepted(self) -> DataFrame:
        return self.early.unionByName(self.late_accepted)


def fixed_firings(fixed: FixedRows, input_cols: list[str], aggs: dict[str, str],
                  partitions: int | None = None) -> DataFrame:
    """Every firing of tumbling/sliding windows (timer firings still PENDING their watermark), see the module doc."""
    if not all(_order_free(fixed.early, e) for e in aggs.values()):
        return _by_key(_numbered(fixed.accepted, input_cols, aggs), partitions)
    # Late-accepted elements are few and come from the materialised `behind` rows: numbering them again in each
    # of their readers costs less than a job per step. Slots run 1..k per window, so their count is the sum of k.
    ranked = fixed.late_accepted.withColumn(
        "__slot", F.row_number().over(Window.partitionBy(*_WID).orderBy(*ORDER)).cast("long"))
    per_window = ranked.groupBy(*_WID).agg(F.max("__slot").alias("__k"))
    stats = ranked.agg(F.count(F.lit(1)).alias("n"), F.max("__slot").alias("k")).collect()[0]
    if (stats["n"] or 0) > _LATE_ELEMENTS_MAX or (stats["k"] or 0) > _LATE_FIRINGS_PER_WINDOW_MAX:
        return _by_key(_numbered(fixed.accepted, input_cols, aggs), partitions)
    return _slot_firings(fixed.early, ranked, per_window if stats["n"] else None, aggs, partitions)


def _by_key(df: DataFrame, partitions: int | None) -> DataFrame:
    return df if partitions is None else df.repartition(partitions, "key")


def _slot_firings(early: DataFrame, ranked: DataFrame, per_window: DataFrame | None, aggs: dict[str, str],
                  partitions: int | None) -> DataFrame:
    """One aggregate per (window, slot); see the module doc."""
    agg_cols = sorted({c for c in early.columns} - {"wm_before"})
    if per_window is None:  # no late firing at all: every early row in slot 0, no join
        slots = early.withColumn("__slot", F.lit(0).cast("long"))
    else:
        slots = (early.join(F.broadcast(per_window), _WID, "left")
                 .withColumn("__slot", F.explode(F.sequence(F.lit(0).cast("long"), F.coalesce("__k", F.lit(0)))))
                 .drop("__k"))
    slots = slots.select(*agg_cols, "__slot", F.lit(1).alias("__early"), F.lit(None).cast("long").alias("__fw"),
                         F.lit(None).cast("long").alias("__fa"))
    if per_window is not None:
        own = F.col("__own") == F.col("__slot")
        late = (ranked.join(F.broadcast(per_window), _WID)
                .select(*agg_cols, F.col("wm_before"), F.col("__slot").alias("__own"),
                        F.explode(F.sequence(F.col("__slot"), F.col("__k"))).alias("__slot"))
                .select(*agg_cols, "__slot", F.lit(0).alias("__early"), F.when(own, F.col("wm_before")).alias("__fw"),
                        F.when(own, F.col("arrival_time")).alias("__fa")))
        slots = slots.unionByName(late)
    grouped = (_by_key(slots, partitions).groupBy(*_WID, "__slot")
               .agg(F.max("__early").alias("__has_early"), F.max("__fw").alias("__fw"), F.max("__fa").alias("__fa"),
                    F.max("arrival_time").alias("__a"), F.count(F.lit(1)).alias(POS),
                    *[F.expr(e).alias(n) for n, e in aggs.items()]))
    timer = F.col("__slot") == 0
    return grouped.select(
        *_WID, POS,
        F.when(timer, F.lit(0)).otherwise(F.col("__slot") - 1 + F.col("__has_early")).cast("long").alias("fire_index"),
        F.when(timer, F.lit(PENDING)).otherwise(F.lit(FIRE_LATE_ROW)).alias("fire_reason"),
        F.when(~timer, F.col("__fw")).alias("fire_watermark"),
        F.coalesce(F.col("__fa"), F.col("__a")).alias("arrival_time"), *aggs.keys())


def fixed_queries(rows: DataFrame, cfg: JobConfig) -> DataFrame:
    """The max timestamps (end - 1) of every window some row falls in: a superset of the timer firings' lookups,
    taken from the rows (a scan with a partial distinct) rather than from the firings, so the firings' shuffle is
    not run a second time to find them."""
    w = cfg.window
    slide = slide_of(w)
    q = rows.select((last_start(w) + F.lit(w.size_ms - 1)).alias("__q")).distinct()
    n_windows = -(-w.size_ms // slide)
    if n_windows > 1:
        q = (q.select("__q", F.explode(F.sequence(F.lit(0), F.lit(n_windows - 1))).alias("__k"))
             .select((F.col("__q") - F.col("__k") * F.lit(slide)).alias("__q")).distinct())
    return q


def _number(accepted: DataFrame, input_cols: list[str]) -> DataFrame:
    """Elements of fixed windows numbered in replay order, with their firing columns (see above)."""
    wm = F.col("wm_before")
    max_ts = F.col(WE) - F.lit(1)
    ordered = Window.partitionBy("key", WS, WE).orderBy(*ORDER)
    whole = ordered.rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing)
    is_early = wm < max_ts
    pos, n_early = F.col(POS), F.col("__n_early")
    elems = (accepted.withColumn(POS, F.row_number().over(ordered).cast("long"))
             .withColumn("__n_early", F.sum(is_early.cast("long")).over(whole)))
    # Early rows come first (wm_before is non-decreasing), so the timer firing holds positions 1..n_early and is
    # read at the last early element; each late-accepted element is a late firing of everything up to it.
    timer_here = is_early & (pos == n_early)
    elems = elems.select(
        *input_cols, WS, WE, POS,
        F.when(timer_here, F.lit(0)).when(~is_early, pos - n_early - 1 + F.when(n_early > 0, 1).otherwise(0))
        .cast("long").alias("fire_index"),
        F.when(timer_here, F.lit(PENDING)).when(~is_early, F.lit(FIRE_LATE_ROW)).alias("fire_reason"),
        F.when(~is_early, wm).alias("fire_watermark"))
    return elems


def _numbered(accepted: DataFrame, input_cols: list[str], aggs: dict[str, str]) -> DataFrame:
    return firings_with_aggregates(_number(accepted, input_cols), _WID, list(ORDER), aggs)


_ORDER_FREE = re.compile(r"^\s*(count|min|max|sum)\s*\(", re.I)


def _order_free(frame: DataFrame, expr: str) -> bool:
    """Whether `expr` is one count/min/max/sum call whose result cannot depend on the order rows are combined in:
    not over floating point (rounding of sums; -0.0 against 0.0 in min/max)."""
    text = expr.strip()
    if not _ORDER_FREE.match(text) or not single_call(text):
        return False
    try:
        frame.select(F.expr(text).alias("__x")).schema  # analysis only: is it one valid aggregate at all
        inner = text[text.index("(") + 1:-1].strip()
        if inner == "*" or text.lower().startswith("count"):
            return True
        if re.match(r"^distinct\b", inner, re.I):
            inner = inner[len("distinct"):]
        arg_type = frame.select(F.expr(inner).alias("__y")).schema["__y"].dataType.simpleString()
    except AnalysisException:
        return False
    return "float" not in arg_type and "double" not in arg_type
