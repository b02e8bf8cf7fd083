"""Tumbling, sliding and cumulate windows: firings as one aggregate (SEMANTICS §5–6); which windows hold a row is
fixed_assign.py.

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
them. When every aggregate combines (merge.py: one count/sum/min/max call, not over floating point), the timer
firings are one aggregate per window over its early rows (the work of a plain groupBy-window job), and the late
firings are running aggregates over each window's late-accepted elements (slot j = the j-th, in replay order),
combined with the window's early aggregate by a join per window. Both sides are shuffled by key into the
windows output's partitions, so the join and the write need no second shuffle of the timer firings.

Otherwise the firings come from running aggregates over each window's elements in replay order: by a walk in the
engine's extension (fixed_walk.py) when it evaluates every aggregate, else from numbered elements and Spark's
window functions (`_numbered`). Either way the elements are shuffled by key into the windows output's partitions
first: the firings and their write share one shuffle.
"""
from __future__ import annotations

from pyspark.sql import DataFrame, Observation, Window
from pyspark.sql import functions as F

from ...semantics.config import JobConfig
from ...semantics.model import FIRE_LATE_ROW
from ..elements import ORDER, PENDING, POS, WE, WS, cleanup, firings_with_aggregates
from .fixed_assign import assign, first_max_ts, last_end, max_timestamps, windows_per_row
from .fixed_walk import walked_firings
from .merge import Combine, combiners

# Late-accepted elements (an upper bound: behind rows x windows per row) joined as a hash table per partition up to
# this many; beyond, by a sort-merge join (no table in memory, but the timer firings are sorted too).
_LATE_HASHED_MAX = 2_000_000
_WID = ["key", WS, WE]


class FixedRows:
    """The rows of tumbling/sliding/cumulate windows sorted into early elements, late-accepted elements and late rows."""

    def __init__(self, rows: DataFrame, cfg: JobConfig, input_cols: list[str]):
        w, wm = cfg.window, F.col("wm_before")
        lateness = w.allowed_lateness_ms
        self.keyless = cfg.source.keyless  # every key null: a join on the key must be null-safe
        self.early = assign(rows, w).where(wm < F.col(WE) - F.lit(1))
        # Not early in some window: late rows and late-accepted ones (few), computed once; their count comes with
        # that job (an observation, no job of its own) and bounds the late-accepted elements.
        seen = Observation("behind")
        self.behind = (rows.where(wm >= first_max_ts(w)).observe(seen, F.count(F.lit(1)).alias("n"))
                       .localCheckpoint(eager=True))
        self.late_bound = seen.get["n"] * windows_per_row(w)
        last_max_ts = last_end(w) - F.lit(1)
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
    combine = combiners(fixed.early, aggs)
    if combine is None:
        walked = walked_firings(fixed.accepted, aggs, partitions)
        if walked is not None:
            return walked
        # Spark drops the write's repartition into the partitions the elements already have.
        return _numbered(_by_key(fixed.accepted, partitions), input_cols, aggs)
    timer = _timer_firings(_by_key(_every_window(fixed), partitions), aggs)
    late = _late_firings(fixed.late_accepted, aggs, partitions)
    if fixed.late_bound <= _LATE_HASHED_MAX:
        late = late.hint("shuffle_hash")  # few: a hash table of them per partition, the timer side streams past it
    return _combined(timer, late, combine, fixed.keyless)


def _every_window(fixed: FixedRows) -> DataFrame:
    """The early elements plus the late-accepted ones marked as not early: every window with an accepted row
    appears in the aggregate, so the late firings join it from one side (a left join keeps the aggregate's
    partitioning by key, which the write then reuses; a full outer join would lose it)."""
    cols = [c for c in fixed.early.columns if c != "wm_before"]
    return (fixed.early.select(*cols, F.lit(True).alias("__early"))
            .unionByName(fixed.late_accepted.select(*cols, F.lit(False).alias("__early"))))


def _timer_firings(elements: DataFrame, aggs: dict[str, str]) -> DataFrame:
    """Per window, the aggregates over its early elements only (FILTER: the late ones are only there to make the
    window appear): POS counts them (0: no timer firing)."""
    early = " FILTER (WHERE __early)"
    return elements.groupBy(*_WID).agg(F.expr("count(*)" + early).alias(POS),
                                       *[F.expr(e.strip() + early).alias(n) for n, e in aggs.items()])


def _by_key(df: DataFrame, partitions: int | None) -> DataFrame:
    return df if partitions is None else df.repartition(partitions, "key")


def _late_firings(late_accepted: DataFrame, aggs: dict[str, str], partitions: int | None) -> DataFrame:
    """Per late-accepted element, in replay order within its window: its slot j (1, 2, ...), its own watermark and
    arrival (the j-th late firing's), and the running aggregates over late elements 1..j. Plus one slot-0 row per
    such window, with no values, which meets the window's timer firing in the join (_combined). The elements are
    shuffled by key once, into the timer firings' partitions: the running aggregates and the join need no other
    shuffle (a window's elements are in one partition)."""
    ordered = Window.partitionBy(*_WID).orderBy(*ORDER)
    running = ordered.rowsBetween(Window.unboundedPreceding, Window.currentRow)
    slots = _by_key(late_accepted, partitions).select(
        *_WID, F.row_number().over(ordered).cast("long").alias("__slot"), F.col("wm_before").alias("__fw"),
        F.col("arrival_time").alias("__fa"), *[F.expr(e).over(running).alias(n) for n, e in aggs.items()])
    # The first slot of each window also stands for the window's marker: one pass, no distinct of the windows.
    copies = F.when(F.col("__slot") == 1, F.array(F.lit(0), F.lit(1))).otherwise(F.array(F.lit(1)))
    is_marker = F.col("__copy") == 0
    values = [c for c in slots.columns if c not in (*_WID, "__slot")]
    return slots.select("*", F.explode(copies).alias("__copy")).select(
        *_WID, F.when(is_marker, F.lit(0).cast("long")).otherwise(F.col("__slot")).alias("__slot"),
        *[F.when(~is_marker, F.col(c)).alias(c) for c in values])


def _combined(timer: DataFrame, late: DataFrame, combine: dict[str, Combine], keyless: bool = False) -> DataFrame:
    """The timer firings (slot 0) and late firings (slot j) from the early aggregate and the late running ones, by
    a left join per window (both sides are partitioned by key alike: no shuffle of the timer side). A window with
    no early element has no timer firing."""
    mine = {c: f"__t_{c}" for c in (POS, *combine)}
    timer = timer.select(*_WID, *[F.col(c).alias(t) for c, t in mine.items()])
    if keyless:  # the null key joined null-safe (only then: such a join would lose the sides' partitioning by key)
        late = late.withColumnsRenamed({c: f"__late{c}" for c in _WID})
        both = timer.join(late, [F.col(c).eqNullSafe(F.col(f"__late{c}")) for c in _WID], "left") \
            .drop(*[f"__late{c}" for c in _WID])
    else:
        both = timer.join(late, _WID, "left")
    slot = F.coalesce(F.col("__slot"), F.lit(0).cast("long"))
    has_early = F.col(mine[POS]) > 0
    timer_firing = slot == 0
    return both.where(has_early | ~timer_firing).select(
        *_WID, (F.col(mine[POS]) + slot).alias(POS),
        F.when(timer_firing, F.lit(0)).otherwise(slot - 1 + has_early.cast("long")).cast("long").alias("fire_index"),
        F.when(timer_firing, F.lit(PENDING)).otherwise(F.lit(FIRE_LATE_ROW)).alias("fire_reason"),
        F.when(~timer_firing, F.col("__fw")).alias("fire_watermark"),
        # A row's arrival says which partition caused a late firing; a timer firing is the watermark's (none).
        F.when(~timer_firing, F.col("__fa")).alias("arrival_time"),
        *[fn(F.col(mine[n]), F.col(n)).alias(n) for n, fn in combine.items()])


def fixed_queries(rows: DataFrame, cfg: JobConfig) -> DataFrame:
    """The max timestamps (end - 1) of every window some row falls in: a superset of the timer firings' lookups,
    taken from the rows (a scan with a partial distinct) rather than from the firings, so the firings' shuffle is
    not run a second time to find them."""
    return max_timestamps(rows, cfg.window)


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
