"""Stage 2 of the Spark engine: windows, firings and late rows (SEMANTICS §5–6), see contract.py.

Everything here reads `wm_before`, the stream watermark just before each row. Since the stream watermark never
goes back, `wm_before` is non-decreasing in replay order (arrival_time, split, offset), which turns the per-row
walk of the reference model into set operations. For one (key, window) with max timestamp `m = end - 1` and
cleanup time `c = m + allowed_lateness`, its rows split by `W = wm_before` into

    early           W < m        the window's first firing is its event-time timer at m: a `watermark` firing at
                                 the first stream value >= m (an as-of lookup), else `end_of_input` (flush) or
                                 nothing (hold); it holds exactly the early rows, which come first in replay order;
    late-accepted   m <= W < c   each fires at once (`late_row`, fire_watermark = W) with everything so far;
    dropped         c <= W       not added; a row dropped from all its windows is a late row (late_watermark = W).

So every firing holds a prefix of its window's rows in one fixed order. Tumbling and sliding windows are
`fixed.py` (one aggregate per window over its early rows, combined with running aggregates over the late-accepted
ones). Sessions merge, so they need one sequential pass per key
(`sessions.py`: a walk in the engine's Spark extension, O(n log n)); the pass emits window memberships in
prefix form and elements.firings_with_aggregates evaluates the Spark SQL aggregates as running aggregates over
them. The timer firings' watermarks are looked up in `fire_lookup.py`. This module dispatches and picks the rows a
partition carries.
"""
from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ...semantics.config import JobConfig
from ..elements import PENDING, POS, WE, WS, cleanup, firings_with_aggregates
from .fire_lookup import with_fire_watermarks
from .fixed import FixedRows, fixed_firings, fixed_queries
from .fixed_assign import last_end
from .sessions import WID_OFFSET, WID_SPLIT, session_elements

CAUSE_ARRIVAL = "cause_arrival_time"


def windows_partitions(spark, cfg: JobConfig) -> int | None:
    """The partitions the windows are computed in: the windows output's files when they are at least the session's
    cores (the write then needs no shuffle of its own), else None, Spark's shuffle partitions (fewer files than
    cores would leave cores idle in the windows' heaviest stage; the write then shuffles into its files). The
    output is the same either way."""
    files = cfg.output.windows_files
    return files if files >= spark.sparkContext.defaultParallelism else None


def compute_windows(rows: DataFrame, stream_values: DataFrame, cfg: JobConfig, *, new_from_ms: int | None = None,
                    carried_wm: int | None = None, fire_lookup=None,
                    partitions: int | None = None) -> tuple[DataFrame, DataFrame]:
    """(firings, late_rows) of SEMANTICS §5–6 for rows carrying `wm_before`; see the module doc.

    Partition replay (state carried, see history/state.py): `rows` are the carried rows (arrival < new_from_ms, with
    their original wm_before) plus the partition's rows, `stream_values` only the values the stream reached in
    the partition and `carried_wm` the stream watermark the partition started from. Only the firings caused in
    the partition are emitted: a late firing at one of its rows, or a timer firing whose max timestamp the
    stream had not reached (`end - 1 > carried_wm`: it found its value in the partition, or flushes, or holds);
    late rows only from the partition's rows. Fire indexes come out right because every row of a window that
    is still open is carried.

    `rows` is read a few times (plans are not shared between branches): a caller whose rows come out of an
    expensive plan should persist them first."""
    firings, late, _ = compute_windows_with_elements(rows, stream_values, cfg, new_from_ms=new_from_ms,
                                                     carried_wm=carried_wm, fire_lookup=fire_lookup,
                                                     partitions=partitions)
    return firings, late


def compute_windows_with_elements(rows: DataFrame, stream_values: DataFrame, cfg: JobConfig, *,
                                  new_from_ms: int | None = None, carried_wm: int | None = None,
                                  fire_lookup=None, partitions: int | None = None,
                                  with_cause: bool = False):
    """compute_windows, plus the elements (window bounds per row: split, offset, __we) for the carried state.

    `fire_lookup`: the driver's lookup of the timer firings (fire_lookup.lookup_for: the stream's values searched
    by the engine's extension, or without its jar the fire table of tumbling/sliding windows); None: the Spark
    lookup.
    `partitions`: the firings come out hash-partitioned by key into that many partitions (the
    windows output's files), so that writing them needs no second shuffle. `with_cause`: the firings also have
    CAUSE_ARRIVAL, the arrival time of the row that caused a `late_row` firing (what a range replay needs to
    tell which partition emitted it, history/span.py)."""
    input_cols = [c for c in rows.columns if c != "wm_before"]
    queries = None
    if cfg.window.type == "session":
        elems, late = session_elements(rows, cfg, input_cols)
        # By key into the windows output's partitions: the running aggregates (partitioned by key and window)
        # and the write then need no shuffle of their own.
        by_key = elems if partitions is None else elems.repartition(partitions, "key")
        firings = firings_with_aggregates(by_key, ["key", WID_SPLIT, WID_OFFSET], [POS], cfg.aggregations)
    else:
        fixed = FixedRows(rows, cfg, input_cols)
        elems, late = fixed.accepted, fixed.late_rows
        firings = fixed_firings(fixed, input_cols, cfg.aggregations, partitions)
        queries = fixed_queries(rows, cfg) if fire_lookup is None else None
    if new_from_ms is not None:
        late = late.where(F.col("arrival_time") >= F.lit(new_from_ms))
        caused_here = F.col("arrival_time") >= F.lit(new_from_ms)
        if carried_wm is not None:
            caused_here = F.when(F.col("fire_reason") == PENDING, F.col(WE) - F.lit(1) > F.lit(carried_wm)) \
                .otherwise(caused_here)
        firings = firings.where(caused_here)
    firings = with_fire_watermarks(firings, stream_values, cfg, queries, fire_lookup)
    out = firings.select(
        "key", F.col(WS).alias("window_start"), F.col(WE).alias("window_end"),
        F.col("fire_index").cast("int").alias("fire_index"), F.col("fire_watermark").cast("long").alias("fire_watermark"),
        "fire_reason", *cfg.aggregations.keys(), *([F.col("arrival_time").alias(CAUSE_ARRIVAL)] if with_cause else []))
    if cfg.having is not None:  # after the window operator: the firings it drops kept their fire index (above)
        out = out.where(F.expr(cfg.having))
    return out, late, elems.select("split", "offset", WE)


def carried_rows(rows: DataFrame, elems: DataFrame, cfg: JobConfig, stream_wm: int) -> DataFrame:
    """The rows to carry past a partition whose stream watermark ended at `stream_wm`: every row of a window
    not purged yet (cleanup time > stream_wm), with its wm_before. Rows of purged windows may come along
    (harmless: the next partition drops such windows before its first row); no row of an open window is lost."""
    lateness = cfg.window.allowed_lateness_ms
    if cfg.window.type != "session":
        # The row's latest window has the largest cleanup time: the row is held somewhere iff that one is open.
        return rows.where(cleanup(last_end(cfg.window) - F.lit(1), lateness) > F.lit(stream_wm))
    open_members = (elems.where(cleanup(F.col(WE) - F.lit(1), lateness) > F.lit(stream_wm))
                    .select("split", "offset").distinct())
    return rows.join(open_members, ["split", "offset"], "left_semi")
