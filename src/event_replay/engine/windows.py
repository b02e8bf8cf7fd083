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

So every firing holds a prefix of its window's rows in one fixed order, and its aggregates are running aggregates
over that order, read at the firing's position (`__upto`). Tumbling and sliding windows are pure DataFrame work
(explode + window functions). Sessions merge, so they need one sequential pass per key (applyInPandas, sorted by
replay order, O(n log n) per key); the pass emits window memberships in the same prefix form and the same
aggregation path evaluates the Spark SQL aggregates.
"""
from __future__ import annotations

import heapq
import re
from bisect import bisect_right

import pandas as pd
from pyspark.errors import AnalysisException
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..semantics.config import JobConfig
from ..semantics.model import FIRE_END_OF_INPUT, FIRE_LATE_ROW, FIRE_WATERMARK
from .contract import POS_INF

ORDER = ("arrival_time", "split", "offset")  # replay order: every sort includes it, so no physical order leaks in

_WS, _WE, _POS, _UPTO = "__ws", "__we", "__pos", "__upto"
_WID_SPLIT, _WID_OFFSET = "__wid_split", "__wid_offset"  # a session window's id: the row that created it
_PENDING = "__pending"  # a timer firing whose watermark is still to be looked up
_BUCKET_BITS = 20  # the as-of lookup's time buckets are 2^20 ms (~17 min) wide


def compute_windows(rows: DataFrame, stream_values: DataFrame, cfg: JobConfig) -> tuple[DataFrame, DataFrame]:
    """(firings, late_rows) of SEMANTICS §5–6 for rows carrying `wm_before`; see the module doc."""
    input_cols = [c for c in rows.columns if c != "wm_before"]
    if cfg.window.type == "session":
        members, firings, late = _sessions(rows, cfg, input_cols)
        wid = [_WID_SPLIT, _WID_OFFSET]
    else:
        members, firings, late = _fixed_windows(rows, cfg, input_cols)
        wid = ["key", _WS, _WE]
    firings = _with_fire_watermarks(firings, stream_values, cfg)
    firings = _with_aggregates(members, firings, wid, cfg.aggregations)
    out = firings.select(
        "key", F.col(_WS).alias("window_start"), F.col(_WE).alias("window_end"),
        F.col("fire_index").cast("int").alias("fire_index"), F.col("fire_watermark").cast("long").alias("fire_watermark"),
        "fire_reason", *cfg.aggregations.keys())
    return out, late


# -- tumbling and sliding: pure DataFrame ---------------------------------------------------------------------

def _cleanup(max_ts: Column, lateness: int) -> Column:
    """max_ts + lateness, saturating at +inf like Flink (ANSI arithmetic would raise instead)."""
    if lateness == 0:
        return max_ts
    return F.when(max_ts > F.lit(POS_INF - lateness), F.lit(POS_INF)).otherwise(max_ts + F.lit(lateness))


def _fixed_windows(rows: DataFrame, cfg: JobConfig, input_cols: list[str]):
    w = cfg.window
    size = w.size_ms
    slide = w.slide_ms if w.type == "sliding" else size
    lateness = w.allowed_lateness_ms
    t = F.col("event_time")
    last_start = t - F.pmod(t - F.lit(w.offset_ms), F.lit(slide))  # Flink's getWindowStartWithOffset
    wm = F.col("wm_before")

    # A row is late iff its latest window (the largest max timestamp) is dropped: cleanup is monotone in the end.
    late = (rows.where(wm >= _cleanup(last_start + F.lit(size - 1), lateness))
            .select(*input_cols, wm.alias("late_watermark")))

    n_windows = -(-size // slide)  # at most this many windows contain a timestamp
    if n_windows == 1:
        elems = rows.withColumn(_WS, last_start)
    else:
        elems = (rows.withColumn("__k", F.explode(F.sequence(F.lit(0), F.lit(n_windows - 1))))
                 .withColumn(_WS, last_start - F.col("__k") * F.lit(slide))
                 .where(F.col(_WS) > t - F.lit(size)).drop("__k"))
    elems = elems.withColumn(_WE, F.col(_WS) + F.lit(size))
    max_ts = F.col(_WE) - F.lit(1)
    accepted = elems.where(wm < _cleanup(max_ts, lateness))

    part = ["key", _WS, _WE]
    ordered = Window.partitionBy(*part).orderBy(*ORDER)
    whole = ordered.rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing)
    early = (wm < max_ts).cast("long")
    members = (accepted.withColumn(_POS, F.row_number().over(ordered).cast("long"))
               .withColumn("__n_early", F.sum(early).over(whole))
               .withColumn("__early", wm < max_ts))
    # Early rows come first (wm_before is non-decreasing), so the timer firing holds positions 1..n_early.
    timer_firings = (members.where(F.col("__early") & (F.col(_POS) == F.col("__n_early")))
                     .select(*part, F.col(_POS).alias(_UPTO), F.lit(0).alias("fire_index"),
                             F.lit(None).cast("long").alias("fire_watermark"), F.lit(_PENDING).alias("fire_reason")))
    late_firings = (members.where(~F.col("__early"))
                    .select(*part, F.col(_POS).alias(_UPTO),
                            (F.col(_POS) - F.col("__n_early") - 1
                             + F.when(F.col("__n_early") > 0, 1).otherwise(0)).alias("fire_index"),
                            wm.alias("fire_watermark"), F.lit(FIRE_LATE_ROW).alias("fire_reason")))
    firings = timer_firings.unionByName(late_firings)
    return members.select(*part, _POS, *[c for c in input_cols if c != "key"]), firings, late


# -- sessions: one sequential pass per key --------------------------------------------------------------------

_SESSION_OUT = T.StructType([
    T.StructField("kind", T.StringType()),  # m = member, f = firing, l = late row
    T.StructField(_WID_SPLIT, T.StringType()), T.StructField(_WID_OFFSET, T.LongType()),
    T.StructField(_WS, T.LongType()), T.StructField(_WE, T.LongType()),
    T.StructField("split", T.StringType()), T.StructField("offset", T.LongType()),
    T.StructField(_POS, T.LongType()), T.StructField("fire_index", T.LongType()),
    T.StructField("fire_reason", T.StringType()), T.StructField("fire_watermark", T.LongType()),
])


def _session_pass(gap: int, lateness: int):
    # Everything the pass uses is defined in here or in the standard library, so the function pickles by value
    # and executors need not import this package.
    class _Session:
        """A session window in the pass: `children` are the windows it swallowed (their rows come first)."""
        __slots__ = ("start", "end", "creator", "children", "own", "size", "fired", "pending", "alive")

        def __init__(self, start: int, end: int, creator: int, children: list["_Session"]):
            self.start, self.end, self.creator, self.children = start, end, creator, children
            self.own: list[int] = []  # row indices added while the window had these bounds, in replay order
            self.size = sum(c.size for c in children)
            self.fired = 0  # firings so far: the next fire_index
            self.pending = False  # an event-time timer at end - 1 is registered and has not fired
            self.alive = True

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
        # Sort here: applyInPandas gives no order guarantee, and the walk must follow replay order.
        pdf = pdf.sort_values(list(ORDER), kind="mergesort").reset_index(drop=True)
        ev = pdf["event_time"].to_numpy().tolist()
        wms = pdf["wm_before"].to_numpy().tolist()
        splits = pdf["split"].tolist()
        offsets = pdf["offset"].to_numpy().tolist()
        active: list[_Session] = []  # live windows, sorted by start; disjoint and not touching, so by end too
        starts: list[int] = []
        timers: list[tuple[int, int, _Session]] = []  # (max_ts, creator, window): a heap, stale entries skipped
        fired: list[_Session] = []
        firings: list[tuple[_Session, int, int, str, int | None]] = []  # window, upto, index, reason, watermark
        late: list[tuple[int, int]] = []

        def fire(win: _Session, reason: str, wm: int | None) -> None:
            if win.fired == 0:
                fired.append(win)
            firings.append((win, win.size, win.fired, reason, wm))
            win.fired += 1

        for i, (t, wm) in enumerate(zip(ev, wms)):
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
            lo, hi = t, t + gap
            j = bisect_right(starts, hi)
            k = j
            while k > 0 and active[k - 1].end >= lo:
                k -= 1
            swallowed = active[k:j]
            if len(swallowed) == 1 and swallowed[0].start <= lo and swallowed[0].end >= hi:
                win = swallowed[0]  # lands inside an existing window: same bounds, same window
            else:
                start = min([lo] + [s.start for s in swallowed])
                end = max([hi] + [s.end for s in swallowed])
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

        out = []
        for win in fired:
            wid = (splits[win.creator], offsets[win.creator])
            for pos, r in enumerate(win.rows(), start=1):
                out.append(("m", *wid, win.start, win.end, splits[r], offsets[r], pos, None, None, None))
        for win, upto, index, reason, wm in firings:
            out.append(("f", splits[win.creator], offsets[win.creator], win.start, win.end, None, None, upto,
                        index, reason, wm))
        for r, wm in late:
            out.append(("l", None, None, None, None, splits[r], offsets[r], None, None, None, wm))
        frame = pd.DataFrame(out, columns=_SESSION_OUT.fieldNames())
        for name in (_WID_OFFSET, _WS, _WE, "offset", _POS, "fire_index", "fire_watermark"):
            frame[name] = frame[name].astype("Int64")  # nullable: None stays null through Arrow
        return frame

    return run


def _sessions(rows: DataFrame, cfg: JobConfig, input_cols: list[str]):
    pass_out = (rows.select("key", "split", "offset", "arrival_time", "event_time", "wm_before")
                .groupBy("key")
                .applyInPandas(_session_pass(cfg.window.gap_ms, cfg.window.allowed_lateness_ms), _SESSION_OUT))
    by_row = ["split", "offset"]
    late = (pass_out.where(F.col("kind") == "l").select(*by_row, F.col("fire_watermark").alias("late_watermark"))
            .join(rows.select(*input_cols), by_row)
            .select(*input_cols, "late_watermark"))
    members = (pass_out.where(F.col("kind") == "m").select(_WID_SPLIT, _WID_OFFSET, _POS, *by_row)
               .join(rows.select(*input_cols), by_row)
               .select(_WID_SPLIT, _WID_OFFSET, _POS, *input_cols))
    # The key of a firing is the key of the row that created its window.
    creators = rows.select(F.col("split").alias(_WID_SPLIT), F.col("offset").alias(_WID_OFFSET), "key")
    firings = (pass_out.where(F.col("kind") == "f")
               .select(_WID_SPLIT, _WID_OFFSET, _WS, _WE, F.col(_POS).alias(_UPTO), "fire_index", "fire_watermark",
                       "fire_reason")
               .join(creators, [_WID_SPLIT, _WID_OFFSET]))
    return members, firings, late


# -- timer firings: the stream value that fired them ---------------------------------------------------------

def _with_fire_watermarks(firings: DataFrame, stream_values: DataFrame, cfg: JobConfig) -> DataFrame:
    """A timer firing happens when the stream first reaches the window's max timestamp: at the smallest stream
    value >= end - 1. None: `end_of_input` with flush; with hold the window stays open and does not fire."""
    pending = firings.where(F.col("fire_reason") == _PENDING)
    found = _next_values(pending.select((F.col(_WE) - F.lit(1)).alias("__q")).distinct(), stream_values)
    resolved = (pending.withColumn("__q", F.col(_WE) - F.lit(1)).join(found, "__q", "left")
                .withColumn("fire_watermark", F.col("__v"))
                .withColumn("fire_reason", F.when(F.col("__v").isNull(), F.lit(FIRE_END_OF_INPUT))
                            .otherwise(F.lit(FIRE_WATERMARK)))
                .drop("__q", "__v"))
    if cfg.replay.end_of_input != "flush":
        resolved = resolved.where(F.col("fire_reason") == FIRE_WATERMARK)
    return firings.where(F.col("fire_reason") != _PENDING).unionByName(resolved)


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
    # Ties: a query sorts before an equal value, so the value is in its following frame (>=, not >).
    following = (Window.partitionBy("__b").orderBy("__t", "__is_value")
                 .rowsBetween(Window.currentRow, Window.unboundedFollowing))
    in_bucket = both.withColumn("__v", F.min(value).over(following))
    later = Window.orderBy("__b").rowsBetween(1, Window.unboundedFollowing)  # one row per bucket: one partition
    bucket_next = (both.groupBy("__b").agg(F.min(value).alias("__m"))
                   .select("__b", F.min("__m").over(later).alias("__later")))
    return (in_bucket.where(F.col("__is_value") == 0)
            .join(bucket_next, "__b", "left")
            .select(F.col("__t").alias("__q"), F.coalesce(F.col("__v"), F.col("__later")).alias("__v")))


# -- aggregates ------------------------------------------------------------------------------------------------

def _runs_as_window_function(frame: DataFrame, expr: str, spec) -> bool:
    """Whether `expr` is one aggregate call Spark accepts over a window. A syntactic check first (one call
    spanning the whole text, no DISTINCT/FILTER), so that the common rejections do not go through a failed
    analysis (which Spark logs at length); then the analysis decides (no job runs)."""
    text = expr.strip()
    if not re.match(r"^[A-Za-z_][A-Za-z0-9_.]*\s*\(", text) or re.search(r"\b(distinct|filter)\b", text, re.I):
        return False
    depth = 0
    for i, ch in enumerate(text):
        depth += (ch == "(") - (ch == ")")
        if depth == 0 and ch == ")":
            if i != len(text) - 1:
                return False
            break
    try:
        frame.select(F.expr(text).over(spec)).schema
        return True
    except AnalysisException:
        return False


def _with_aggregates(members: DataFrame, firings: DataFrame, wid: list[str], aggs: dict[str, str]) -> DataFrame:
    """Each firing (window id + `__upto`) gets every aggregate over its window's members with `__pos <= __upto`.

    An aggregate that Spark can run as a window function (one aggregate call: sum(x), count(*), avg(x),
    approx_count_distinct(x), ...) is a running aggregate over the window's members in position order, read at
    the firing's position: O(n log n). Anything else (sum(x) / count(*), count(DISTINCT x), FILTER clauses)
    goes through a join of each firing to its window's members up to its position and a groupBy: exact, but it
    costs the sum over firings of their window sizes, which is O(n) when windows fire about once and grows with
    the number of late firings of large windows.
    """
    running_spec = (Window.partitionBy(*wid).orderBy(_POS)
                    .rowsBetween(Window.unboundedPreceding, Window.currentRow))
    windowable, general = {}, {}
    for name, expr in aggs.items():
        (windowable if _runs_as_window_function(members, expr, running_spec) else general)[name] = expr

    m = {c: f"__m_{c}" for c in wid}
    join_on = [F.col(c).eqNullSafe(F.col(m[c])) for c in wid]  # null-safe: a null key is still a key
    out = firings
    if windowable:
        running = members.select(*[F.col(c).alias(m[c]) for c in wid], F.col(_POS).alias("__m_pos"),
                                 *[F.expr(e).over(running_spec).alias(n) for n, e in windowable.items()])
        out = (out.join(running, join_on + [F.col(_UPTO) == F.col("__m_pos")], "left")
               .drop(*m.values(), "__m_pos"))
    if general:
        f = {c: f"__f_{c}" for c in [*wid, _UPTO]}
        ids = firings.select(*[F.col(c).alias(f[c]) for c in f])
        grouped = (members.join(ids, [F.col(c).eqNullSafe(F.col(f[c])) for c in wid] + [F.col(_POS) <= F.col(f[_UPTO])])
                   .groupBy(*f.values()).agg(*[F.expr(e).alias(n) for n, e in general.items()]))
        out = (out.join(grouped, [F.col(c).eqNullSafe(F.col(f[c])) for c in f], "left").drop(*f.values()))
    return out
