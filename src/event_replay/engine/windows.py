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
fixed_windows.py (one aggregate over slots). Sessions merge, so they need one sequential pass per key
(applyInPandas over buckets of keys, each key's rows sorted by replay order, O(n log n)); the pass emits window
memberships in prefix form and elements.firings_with_aggregates evaluates the Spark SQL aggregates as running
aggregates over them. This module dispatches, looks up the timer firings' watermarks and picks the rows a partition
carries.
"""
from __future__ import annotations

import heapq
from bisect import bisect_right

import numpy as np
import pandas as pd
from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..semantics.config import JobConfig
from ..semantics.model import FIRE_END_OF_INPUT, FIRE_LATE_ROW, FIRE_WATERMARK
from .contract import POS_INF
from .elements import ORDER, PENDING as _PENDING, POS as _POS, WE as _WE, WS as _WS, cleanup as _cleanup
from .elements import firings_with_aggregates
from .fixed_windows import FixedRows, fixed_firings, fixed_queries, last_start

_WID_SPLIT, _WID_OFFSET = "__wid_split", "__wid_offset"  # a session window's id: the row that created it
_BUCKET_BITS = 20  # the as-of lookup's time buckets are 2^20 ms (~17 min) wide


def compute_windows(rows: DataFrame, stream_values: DataFrame, cfg: JobConfig, *, new_from_ms: int | None = None,
                    carried_wm: int | None = None, fire_lookup: DataFrame | None = None,
                    partitions: int | None = None) -> tuple[DataFrame, DataFrame]:
    """(firings, late_rows) of SEMANTICS §5–6 for rows carrying `wm_before`; see the module doc.

    Partition replay (state carried, see state.py): `rows` are the carried rows (arrival < new_from_ms, with
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
                                  fire_lookup: DataFrame | None = None, partitions: int | None = None):
    """compute_windows, plus the elements (window bounds per row: split, offset, __we) for the carried state.

    `fire_lookup` (tumbling/sliding only): (__q, __v) for every window's max timestamp, from fire_lookup.py.
    `partitions`: the tumbling/sliding firings come out hash-partitioned by key into that many partitions (the
    windows output's files), so that writing them needs no second shuffle."""
    input_cols = [c for c in rows.columns if c != "wm_before"]
    queries = None
    if cfg.window.type == "session":
        elems, late = _session_elements(rows, cfg, input_cols)
        firings = firings_with_aggregates(elems, [_WID_SPLIT, _WID_OFFSET], [_POS], cfg.aggregations)
    else:
        fixed = FixedRows(rows, cfg, input_cols)
        elems, late = fixed.accepted, fixed.late_rows
        firings = fixed_firings(fixed, input_cols, cfg.aggregations, partitions)
        queries = fire_lookup if fire_lookup is not None else fixed_queries(rows, cfg)
    if new_from_ms is not None:
        late = late.where(F.col("arrival_time") >= F.lit(new_from_ms))
        caused_here = F.col("arrival_time") >= F.lit(new_from_ms)
        if carried_wm is not None:
            caused_here = F.when(F.col("fire_reason") == _PENDING, F.col(_WE) - F.lit(1) > F.lit(carried_wm)) \
                .otherwise(caused_here)
        firings = firings.where(caused_here)
    firings = _with_fire_watermarks(firings, stream_values, cfg, queries, known=fire_lookup is not None)
    out = firings.select(
        "key", F.col(_WS).alias("window_start"), F.col(_WE).alias("window_end"),
        F.col("fire_index").cast("int").alias("fire_index"), F.col("fire_watermark").cast("long").alias("fire_watermark"),
        "fire_reason", *cfg.aggregations.keys())
    return out, late, elems.select("split", "offset", _WE)


def carried_rows(rows: DataFrame, elems: DataFrame, cfg: JobConfig, stream_wm: int) -> DataFrame:
    """The rows to carry past a partition whose stream watermark ended at `stream_wm`: every row of a window
    not purged yet (cleanup time > stream_wm), with its wm_before. Rows of purged windows may come along
    (harmless: the next partition drops such windows before its first row); no row of an open window is lost."""
    lateness = cfg.window.allowed_lateness_ms
    if cfg.window.type != "session":
        w = cfg.window
        last_end = last_start(w) + F.lit(w.size_ms)
        # The row's latest window has the largest cleanup time: the row is held somewhere iff that one is open.
        return rows.where(_cleanup(last_end - F.lit(1), lateness) > F.lit(stream_wm))
    open_members = (elems.where(_cleanup(F.col(_WE) - F.lit(1), lateness) > F.lit(stream_wm))
                    .select("split", "offset").distinct())
    return rows.join(open_members, ["split", "offset"], "left_semi")


# -- sessions: one sequential pass per key --------------------------------------------------------------------

_SESSION_OUT = T.StructType([
    T.StructField("kind", T.StringType()),  # m = element, l = late row (fire_watermark = late watermark)
    T.StructField(_WID_SPLIT, T.StringType()), T.StructField(_WID_OFFSET, T.LongType()),
    T.StructField(_WS, T.LongType()), T.StructField(_WE, T.LongType()),
    T.StructField("split", T.StringType()), T.StructField("offset", T.LongType()),
    T.StructField(_POS, T.LongType()), T.StructField("fire_index", T.LongType()),
    T.StructField("fire_reason", T.StringType()), T.StructField("fire_watermark", T.LongType()),
])


def _session_pass(gap: int, lateness: int):
    # Everything the pass uses is defined in here, in the standard library, numpy or pandas, so the function
    # pickles by value and executors need not import this package.
    class _Session:
        """A session window in the pass: `children` are the windows it swallowed (their rows come first)."""
        __slots__ = ("start", "end", "creator", "children", "own", "size", "fired", "pending", "alive",
                     "firings")

        def __init__(self, start: int, end: int, creator: int, children: list["_Session"]):
            self.start, self.end, self.creator, self.children = start, end, creator, children
            self.own: list[int] = []  # row indices added while the window had these bounds, in replay order
            self.size = sum(c.size for c in children)
            self.fired = 0  # firings so far: the next fire_index
            self.pending = False  # an event-time timer at end - 1 is registered and has not fired
            self.alive = True
            self.firings: dict[int, tuple] = {}  # size at the firing -> (fire_index, reason, watermark)

        def rows(self) -> list[int]:
            """The rows in membership order: swallowed windows' rows (recursively), then its own. Each firing holds
            a prefix of it. Iterative: merge chains can be long."""
            out: list[int] = []
            stack: list[object] = [self]
            while stack:
                item = stack.pop()
                if isinstance(item, _Session):
                    stack.append(item.own)
                    stack.extend(reversed(item.children))
                else:
                    out.extend(item)  # type: ignore[arg-type]
            return out

    def cleanup(end: int) -> int:
        return min(end - 1 + lateness, POS_INF)

    def run(pdf: pd.DataFrame) -> pd.DataFrame:
        """Every key of a bucket, one after the other (a bucket holds many keys: one pandas call per bucket, not
        per key, whose fixed cost dominated with many small keys)."""
        # Sort here: applyInPandas gives no order guarantee, and the walk must follow replay order.
        pdf = pdf.sort_values(["key", *ORDER], kind="mergesort").reset_index(drop=True)
        keys = pdf["key"].to_numpy()
        cuts = [0, *(np.flatnonzero(keys[1:] != keys[:-1]) + 1).tolist(), len(keys)] if len(keys) else [0]
        ev = pdf["event_time"].to_numpy().tolist()
        wms = pdf["wm_before"].to_numpy().tolist()
        splits = pdf["split"].tolist()
        offsets = pdf["offset"].to_numpy().tolist()
        out: list[tuple] = []
        for lo, hi in zip(cuts[:-1], cuts[1:]):
            walk_key(ev, wms, splits, offsets, lo, hi, out)
        # Column by column from Python ints: a frame built from rows would infer float64 for a column with
        # nulls and round large longs (such as -inf). Int64 is nullable, so None stays null through Arrow.
        columns = list(zip(*out)) if out else [()] * len(_SESSION_OUT.fields)
        return pd.DataFrame({
            f.name: pd.array(list(col), dtype="Int64" if isinstance(f.dataType, T.LongType) else object)
            for f, col in zip(_SESSION_OUT.fields, columns)})

    def walk_key(ev: list, wms: list, splits: list, offsets: list, lo: int, hi: int, out: list) -> None:
        """One key's rows lo..hi-1 (in replay order): its elements and late rows appended to `out`."""
        active: list[_Session] = []  # live windows, sorted by start; disjoint and not touching, so by end too
        starts: list[int] = []
        timers: list[tuple[int, int, _Session]] = []  # (max_ts, creator, window): a heap, stale entries skipped
        fired: list[_Session] = []
        late: list[tuple[int, int]] = []

        def fire(win: _Session, reason: str, wm: int | None) -> None:
            if win.fired == 0:
                fired.append(win)
            win.firings[win.size] = (win.fired, reason, wm)  # sizes only grow: one firing per size
            win.fired += 1

        for i in range(lo, hi):
            t, wm = ev[i], wms[i]
            # The watermark moved to at least wm before this row: due timers fire (at a stream value looked up
            # later), then windows past their cleanup time are dropped (a prefix, ends being sorted).
            while timers and timers[0][0] <= wm:
                _, _, win = heapq.heappop(timers)
                if win.alive and win.pending:
                    win.pending = False
                    fire(win, _PENDING, None)
            n_gone = 0
            while n_gone < len(active) and cleanup(active[n_gone].end) <= wm:
                active[n_gone].alive = False
                n_gone += 1
            if n_gone:
                del active[:n_gone], starts[:n_gone]
            # Merge [t, t + gap) with every live window it overlaps or touches (Flink's TimeWindow.intersects);
            # a grown window can only reach windows the new one reaches itself, so one scan suffices.
            w_lo, w_hi = t, t + gap
            j = bisect_right(starts, w_hi)
            k = j
            while k > 0 and active[k - 1].end >= w_lo:
                k -= 1
            swallowed = active[k:j]
            if len(swallowed) == 1 and swallowed[0].start <= w_lo and swallowed[0].end >= w_hi:
                win = swallowed[0]  # lands inside an existing window: same bounds, same window
            else:
                start = min([w_lo] + [s.start for s in swallowed])
                end = max([w_hi] + [s.end for s in swallowed])
                if cleanup(end) <= wm:
                    late.append((i, wm))  # the (merged) window is late: retired, the row dropped
                    continue
                win = _Session(start, end, i, swallowed)
                for s in swallowed:
                    s.alive = False  # merged away: its timers are deleted, it never fires again
                active[k:j] = [win]
                starts[k:j] = [start]
            win.own.append(i)
            win.size += 1
            if win.end - 1 <= wm:
                fire(win, FIRE_LATE_ROW, wm)  # a late firing with everything the window holds
            elif not win.pending:
                win.pending = True
                heapq.heappush(timers, (win.end - 1, win.creator, win))
        for win in active:  # timers still registered at the end: looked up (or flushed, or held)
            if win.pending:
                win.pending = False
                fire(win, _PENDING, None)

        for win in fired:
            wid = (splits[win.creator], offsets[win.creator])
            for pos, r in enumerate(win.rows(), start=1):
                out.append(("m", *wid, win.start, win.end, splits[r], offsets[r], pos,
                            *win.firings.get(pos, (None, None, None))))
        for r, wm in late:
            out.append(("l", None, None, None, None, splits[r], offsets[r], None, None, None, wm))

    return run


_SESSION_BUCKETS_PER_CORE = 4  # keys are walked in buckets; any number gives the same result


def _session_elements(rows: DataFrame, cfg: JobConfig, input_cols: list[str]):
    buckets = _SESSION_BUCKETS_PER_CORE * rows.sparkSession.sparkContext.defaultParallelism
    pass_out = (rows.select("key", "split", "offset", "arrival_time", "event_time", "wm_before")
                .groupBy(F.pmod(F.xxhash64("key"), F.lit(buckets)).alias("__bucket"))
                .applyInPandas(_session_pass(cfg.window.gap_ms, cfg.window.allowed_lateness_ms), _SESSION_OUT))
    # One join brings every element's and late row's input columns (the pass only names rows).
    joined = pass_out.join(rows.select(*input_cols), ["split", "offset"])
    late = joined.where(F.col("kind") == "l").select(*input_cols, F.col("fire_watermark").alias("late_watermark"))
    elems = joined.where(F.col("kind") == "m").drop("kind")
    return elems, late


# -- timer firings: the stream value that fired them ---------------------------------------------------------

_LOOKUP_BROADCAST_MAX = 500_000  # (max timestamp -> stream value) pairs: broadcast up to this many


def _with_fire_watermarks(firings: DataFrame, stream_values: DataFrame, cfg: JobConfig,
                          queries: DataFrame | None = None, known: bool = False) -> DataFrame:
    """A timer firing happens when the stream first reaches the window's max timestamp: at the smallest stream
    value >= end - 1. None: `end_of_input` with flush; with hold the window stays open and does not fire.
    `queries` (column __q): a superset of the timer firings' max timestamps, if the caller has a cheaper source
    of them than the firings themselves; `known`: `queries` already holds the answers (__q, __v)."""
    pending = F.col("fire_reason") == _PENDING
    with_q = firings.withColumn("__q", F.when(pending, F.col(_WE) - F.lit(1)))
    given = queries is not None
    if not given:
        queries = with_q.where(F.col("__q").isNotNull()).select("__q").distinct()
    found = queries if known else _next_values(queries, stream_values)
    if known:
        found = F.broadcast(found)
    elif given:
        # One row per window end: small next to the firings, so the firings keep their partitioning (a broadcast
        # hash join instead of shuffling every firing by __q).
        found = found.localCheckpoint(eager=True)
        if found.count() <= _LOOKUP_BROADCAST_MAX:
            found = F.broadcast(found)
    flushed = F.lit(FIRE_END_OF_INPUT) if cfg.replay.end_of_input == "flush" else F.lit(None).cast("string")
    out = (with_q.join(found, "__q", "left")  # a null __q (not a timer firing) matches nothing
           .withColumn("fire_watermark", F.when(pending, F.col("__v")).otherwise(F.col("fire_watermark")))
           .withColumn("fire_reason", F.when(~pending, F.col("fire_reason"))
                       .when(F.col("__v").isNotNull(), F.lit(FIRE_WATERMARK)).otherwise(flushed))
           .drop("__q", "__v"))
    return out.where(F.col("fire_reason").isNotNull())  # hold: windows still waiting do not fire


def _next_values(queries: DataFrame, stream_values: DataFrame) -> DataFrame:
    """For each distinct `__q`: `__v` = the smallest stream value >= __q, or null. An as-of lookup in
    O(n log n), parallel over time buckets and with no job of its own: inside a bucket a window function finds
    the next value; a query with none there takes the smallest value of the later buckets, from a running
    minimum over the (few) buckets. Any monotone bucketing is exact; a fixed width keeps it deterministic."""
    values = stream_values.select(F.col("watermark").cast("long").alias("__t")).where(F.col("__t").isNotNull())
    both = (queries.select(F.col("__q").alias("__t"), F.lit(0).alias("__is_value"))
            .unionByName(values.select("__t", F.lit(1).alias("__is_value")))
            .withColumn("__b", F.shiftright(F.col("__t"), _BUCKET_BITS)))
    value = F.when(F.col("__is_value") == 1, F.col("__t"))
    # The minimum over what follows, as a running minimum in descending order: a frame that grows from the start
    # is computed incrementally, one that runs to the end of the partition is recomputed for every row
    # (quadratic). Ties: a value sorts before an equal query, so it is in the query's frame (>=, not >).
    following = (Window.partitionBy("__b").orderBy(F.col("__t").desc(), F.col("__is_value").desc())
                 .rowsBetween(Window.unboundedPreceding, Window.currentRow))
    in_bucket = both.withColumn("__v", F.min(value).over(following))
    later = Window.orderBy(F.col("__b").desc()).rowsBetween(Window.unboundedPreceding, -1)  # one row per bucket
    bucket_next = (both.groupBy("__b").agg(F.min(value).alias("__m"))
                   .select("__b", F.min("__m").over(later).alias("__later")))
    return (in_bucket.where(F.col("__is_value") == 0)
            .join(bucket_next, "__b", "left")
            .select(F.col("__t").alias("__q"), F.coalesce(F.col("__v"), F.col("__later")).alias("__v")))


