"""The data behind the why-report's timelines, aggregated in Spark so that only small tables reach the driver.

A replayed history is often sparse: a few minutes of traffic a day, and idle nights in between. Plotted over the
whole replay clock, the traffic shrinks to a few vertical jumps. So the timelines zoom on the *traffic spans*: the
stretches of the replay clock where some split's rows moved its watermark, cut where no split published anything for
at least GAP_SHARE of the whole range and MIN_GAP_MS (at most MAX_SPANS spans: the shortest gaps are not cut). Each
span gets its own column of panels, padded so that the idleness which follows the traffic shows.

Each span is cut into time buckets (SPAN_BUCKETS in all: about one per pixel column of the figure), and every
figure is what a bucket can show, whatever happens inside it:
- watermarks: per series (the stream and each split) the highest watermark of the bucket, at the time it was
  reached (the last change: watermarks never go back), and the value carried into the span;
- shares: per series, the share of the bucket's time it was idle, and per split the share of the time it held the
  stream's watermark (its published watermark was the stream's value, see attribution.holders; a value published
  by two splits at once is held by both);
- the watermark lag, newest event time seen minus the stream watermark, as time-weighted percentiles of the bucket
  (median, 90th, maximum). The stream watermark V(t) and its lag are those of the what-if tuning
  (tuning/figures.py: V is kept while every split is idle), computed exactly on the replay clock before bucketing;
  the newest event time is read off the splits' watermarks (the highest published value + the strategy's lag,
  WatermarkConfig.lag_ms: no source row is read). Every published value is at most the newest event time minus
  that lag, and the stream never exceeds the highest published value, so the lag is never below it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from ..spark_jobs import gather
from ..tuning.figures import watermark_lag_segments

SPAN_BUCKETS = 400  # buckets of all spans together: about one per pixel column of the figure's panels
ACTIVITY_BUCKETS = 2000  # resolution at which gaps in the traffic are found
GAP_SHARE = 0.05  # a silence of at least this share of the replayed range separates two spans,
MIN_GAP_MS = 600_000  # and of at least this long: a short log's emission intervals are no silence
MAX_SPANS = 4  # columns of the figure; more would be too narrow to read
MIN_PAD_MS = 1000
MIN_PLOT_MS, MAX_PLOT_MS = -62_135_596_800_000, 253_402_300_799_999  # what datetime can show: +-inf are not
IDLE, HELD = "idle", "held"
LAG_QUANTILES = (0.5, 0.9)


@dataclass(frozen=True)
class Span:
    """[start_ms, end_ms] of the replay clock shown in one column; traffic_ms the part with traffic. Its buckets
    are `bucket_ms()` long: bucket b is [start + b * w, start + (b + 1) * w), the last one cut at end_ms + 1."""
    start_ms: int
    end_ms: int
    traffic_ms: tuple[int, int]
    buckets: int = SPAN_BUCKETS

    def bucket_ms(self) -> int:
        return max(1, math.ceil((self.end_ms - self.start_ms + 1) / self.buckets))

    def bucket_count(self) -> int:
        """The buckets that start inside the span (the last may be shorter)."""
        return math.ceil((self.end_ms - self.start_ms + 1) / self.bucket_ms())

    def bucket_bounds(self, b: int) -> tuple[int, int]:
        """[a, z) of bucket b, inside the span."""
        w = self.bucket_ms()
        return self.start_ms + b * w, min(self.start_ms + (b + 1) * w, self.end_ms + 1)


@dataclass(frozen=True)
class LagBucket:
    """The watermark lag over the part of one bucket where it is defined (ms), time-weighted."""
    bucket: int
    p50_ms: float
    p90_ms: float
    max_ms: int
    covered_ms: int


@dataclass
class Timelines:
    spans: list[Span]
    splits: list[str]
    # (series, span, time_ms, watermark_ms): highest watermark per bucket at the time it was reached, sorted by time
    points: list[tuple[str, int, int, int]] = field(default_factory=list)
    # (series, span) -> the watermark the series had when the span starts (None: none published yet)
    carried: dict[tuple[str, int], int | None] = field(default_factory=dict)
    # (kind, series, span) -> {bucket: share of the bucket's time, 0..1}; kind IDLE or HELD
    shares: dict[tuple[str, str, int], dict[int, float]] = field(default_factory=dict)
    # span -> the lag per bucket where it is defined, by bucket
    lag: dict[int, list[LagBucket]] = field(default_factory=dict)

    def series_points(self, series: str, span: int) -> list[tuple[int, int]]:
        return [(t, w) for s, i, t, w in self.points if s == series and i == span]

    def bucket_rows(self) -> list[dict]:
        """One row per (span, bucket, series) with a share or a lag: what the figure draws (timelines.parquet)."""
        rows: dict[tuple[int, int, str], dict] = {}

        def row(span: int, b: int, series: str) -> dict:
            if (span, b, series) not in rows:
                a, z = self.spans[span].bucket_bounds(b)
                rows[(span, b, series)] = {"span": span, "bucket": b, "start_ms": a, "end_ms": z, "series": series,
                                           "idle_share": 0.0, "held_share": 0.0, "lag_p50_ms": None,
                                           "lag_p90_ms": None, "lag_max_ms": None}
            return rows[(span, b, series)]

        for (kind, series, span), by_bucket in self.shares.items():
            for b, share in by_bucket.items():
                row(span, b, series)[f"{kind}_share"] = share
        for span, buckets in self.lag.items():
            for lb in buckets:
                row(span, lb.bucket, "stream").update(lag_p50_ms=lb.p50_ms, lag_p90_ms=lb.p90_ms,
                                                      lag_max_ms=lb.max_ms)
        return [rows[k] for k in sorted(rows)]


def series_column(wm: DataFrame) -> Column:
    return F.when(F.col("scope") == "stream", F.lit("stream")).otherwise(F.col("split"))


def traffic_spans(wm: DataFrame, t0: int, t1: int, pad_ms: int) -> list[Span]:
    """The spans of the replay clock with traffic (module doc); the whole range when nothing was published."""
    active = wm.where((F.col("scope") == "split") & ~F.col("idle") & F.col("watermark_ms").isNotNull())
    width = max(1, t1 - t0 + 1)
    coarse = F.floor((F.col("replay_time_ms") - F.lit(t0)) * F.lit(ACTIVITY_BUCKETS) / F.lit(width)).cast("long")
    # Per busy coarse bucket its first and last change: at most ACTIVITY_BUCKETS rows, whatever the log's size.
    busy = {r.b: (r.a, r.z) for r in active.groupBy(coarse.alias("b"))
            .agg(F.min("replay_time_ms").alias("a"), F.max("replay_time_ms").alias("z")).collect()}
    if not busy:
        return [Span(t0, t1, (t0, t1))]
    groups = _cut(sorted(busy), max(1, int(GAP_SHARE * ACTIVITY_BUCKETS), int(MIN_GAP_MS * ACTIVITY_BUCKETS / width)))
    spans: list[Span] = []
    for lo, hi in groups:
        inside = [v for b, v in busy.items() if lo <= b <= hi]
        a, z = min(v[0] for v in inside), max(v[1] for v in inside)
        pad = max(pad_ms, (z - a) // 10, MIN_PAD_MS)
        span = Span(max(t0, a - pad), min(t1, z + pad), (a, z))
        if spans and span.start_ms <= spans[-1].end_ms:  # padded into each other: one span
            span = Span(spans[-1].start_ms, span.end_ms, (spans[-1].traffic_ms[0], z))
            spans.pop()
        spans.append(span)
    buckets = max(1, SPAN_BUCKETS // len(spans))  # narrower columns, fewer buckets: one per pixel column still
    return [Span(s.start_ms, s.end_ms, s.traffic_ms, buckets) for s in spans]


def _cut(busy: list[int], min_gap: int) -> list[tuple[int, int]]:
    """Runs of busy buckets separated by at least min_gap empty ones; at most MAX_SPANS (the widest gaps win)."""
    gaps = sorted(((b - a, i) for i, (a, b) in enumerate(zip(busy, busy[1:])) if b - a > min_gap), reverse=True)
    cuts = sorted(i for _, i in gaps[:MAX_SPANS - 1])
    groups, first = [], 0
    for i in cuts:
        groups.append((busy[first], busy[i]))
        first = i + 1
    groups.append((busy[first], busy[-1]))
    return groups


def _span_of(t: Column, spans: list[Span]) -> Column:
    which = F.lit(None).cast("int")
    for i, s in reversed(list(enumerate(spans))):
        which = F.when(t.between(s.start_ms, s.end_ms), F.lit(i)).otherwise(which)
    return which


def _bucket(t: Column, s: Span) -> Column:
    # Bucket indices are small, but they are multiplied by a bucket's width in ms: 64-bit from the start.
    return F.least(F.lit(s.bucket_count() - 1).cast("long"),
                   F.floor((t - F.lit(s.start_ms).cast("long")) / F.lit(s.bucket_ms())).cast("long"))


def _point_frames(series: DataFrame, spans: list[Span]) -> dict[str, DataFrame]:
    plottable = series.where(~F.col("idle") & F.col("watermark_ms").between(MIN_PLOT_MS, MAX_PLOT_MS))
    t = F.col("replay_time_ms")
    which = _span_of(t, spans)
    bucket = F.lit(None).cast("long")
    for i, s in enumerate(spans):
        bucket = F.when(which == i, _bucket(t, s)).otherwise(bucket)
    # A series' watermark never goes back (while published): its highest value of the bucket is its last one, drawn
    # where it was reached, never before.
    points = (plottable.where(which.isNotNull())
              .groupBy("series", which.alias("span"), bucket.alias("b"))
              .agg(F.max("replay_time_ms").alias("t"), F.max("watermark_ms").alias("w")))
    before = plottable.groupBy("series").agg(*[F.max(F.when(t < s.start_ms, F.col("watermark_ms"))).alias(f"s{i}")
                                               for i, s in enumerate(spans)])
    return {"points": points, "carried": before}


def _points(found: dict[str, list[dict]], spans: list[Span]):
    points = sorted((r["series"], r["span"], r["t"], r["w"]) for r in found["points"])
    carried = {(r["series"], i): r[f"s{i}"] for r in found["carried"] for i in range(len(spans))}
    return points, carried


def bucket_overlaps(intervals: DataFrame, spans: list[Span]) -> DataFrame:
    """`intervals` with half-open [a, z) columns, cut by the spans' buckets: one row per (interval, span, bucket it
    overlaps) with the interval's other columns, `span`, `b` and `ms`, the length of the overlap (> 0)."""
    keep = [c for c in intervals.columns if c not in ("a", "z")]
    parts = []
    for i, s in enumerate(spans):
        inside = intervals.where((F.col("a") <= s.end_ms) & (F.col("z") > s.start_ms) & (F.col("z") > F.col("a")))
        a = F.greatest(F.col("a"), F.lit(s.start_ms))
        z = F.least(F.col("z"), F.lit(s.end_ms + 1))
        w = s.bucket_ms()
        cut = inside.select(*keep, a.alias("_a"), z.alias("_z")).select(
            *keep, "_a", "_z", F.lit(i).alias("span"),
            F.explode(F.sequence(_bucket(F.col("_a"), s), _bucket(F.col("_z") - 1, s))).alias("b"))
        lo = F.lit(s.start_ms).cast("long") + F.col("b") * F.lit(w).cast("long")
        ms = F.least(F.col("_z"), lo + F.lit(w)) - F.greatest(F.col("_a"), lo)
        parts.append(cut.select(*keep, "span", "b", ms.alias("ms")).where(F.col("ms") > 0))
    union = parts[0]
    for p in parts[1:]:
        union = union.unionByName(p)
    return union


def _share_frame(intervals: DataFrame, spans: list[Span]) -> DataFrame:
    return bucket_overlaps(intervals, spans).groupBy("kind", "series", "span", "b").agg(F.sum("ms").alias("ms"))


def _shares(rows: list[dict], spans: list[Span]) -> dict[tuple[str, str, int], dict[int, float]]:
    """Per (kind, series, span) the share of each bucket's time the intervals (kind, series, a, z) cover."""
    found: dict[tuple[str, str, int], dict[int, float]] = {}
    for r in rows:
        a, z = spans[r["span"]].bucket_bounds(r["b"])
        found.setdefault((r["kind"], r["series"], r["span"]), {})[r["b"]] = min(1.0, r["ms"] / (z - a))
    return found


def _intervals(series: DataFrame, holders: DataFrame, t1: int) -> DataFrame:
    """(kind, series, a, z): idle stretches of every series, and the stretches each split held the stream."""
    order = Window.partitionBy("series").orderBy("replay_time_ms", F.col("watermark_ms").asc_nulls_first())
    timed = series.withColumn("z", F.coalesce(F.lead("replay_time_ms").over(order), F.lit(t1)))
    idle = timed.where(F.col("idle")).select(F.lit(IDLE).alias("kind"), "series",
                                             F.col("replay_time_ms").alias("a"), "z")
    stream = timed.where((F.col("series") == "stream") & ~F.col("idle"))
    held = (stream.join(holders.where(F.col("holder").isNotNull()), stream.watermark_ms == holders.W)
            .select(F.lit(HELD).alias("kind"), F.explode(F.split("holder", r"\+")).alias("series"),
                    F.col("replay_time_ms").alias("a"), "z"))
    return idle.unionByName(held)


def lag_segments(wm: DataFrame, lag_ms: int, t1: int) -> DataFrame:
    """(t, dur, lag) of the watermark lag on the replay clock (module doc), every stretch where it is defined:
    the what-if tuning's own function on the batch's columns."""
    frame = wm.select("scope", "split", "idle", F.col("watermark_ms").alias("watermark"),
                      F.col("replay_time_ms").alias("replay_time"))
    return watermark_lag_segments(frame, lag_ms, t1)


def _lag_frame(segments: DataFrame, spans: list[Span]) -> DataFrame:
    cut = bucket_overlaps(segments.select("lag", F.col("t").alias("a"), (F.col("t") + F.col("dur")).alias("z")),
                          spans)
    q = F.percentile(F.col("lag"), list(LAG_QUANTILES), F.col("ms"))
    return cut.groupBy("span", "b").agg(q.alias("q"), F.max("lag").alias("mx"), F.sum("ms").alias("ms"))


def _lag(rows: list[dict]) -> dict[int, list[LagBucket]]:
    found: dict[int, list[LagBucket]] = {}
    for r in sorted(rows, key=lambda r: (r["span"], r["b"])):
        found.setdefault(r["span"], []).append(LagBucket(r["b"], float(r["q"][0]), float(r["q"][1]), int(r["mx"]),
                                                         int(r["ms"])))
    return found


def intervals(wm: DataFrame, holders: DataFrame, t1: int) -> DataFrame:
    """(kind, series, a, z) of `wm`: idle stretches of every series, the stretches each split held the stream;
    cached (lazily): every span's buckets, the idle figures and the per-partition overview read them."""
    return _intervals(wm.withColumn("series", series_column(wm)), holders, t1).cache()


def timeline_frames(wm: DataFrame, holders: DataFrame, spans: list[Span], t1: int,
                    segments: DataFrame | None = None, cut: DataFrame | None = None) -> dict[str, DataFrame]:
    """The small frames the timelines are drawn from (timelines_from reads them once gathered): `wm`, `holders`,
    `segments` and `cut` as for `timelines`."""
    series = wm.withColumn("series", series_column(wm))
    intervals_ = cut if cut is not None else intervals(wm, holders, t1)
    frames = {**_point_frames(series, spans), "shares": _share_frame(intervals_, spans)}
    if segments is not None:
        frames["lag"] = _lag_frame(segments, spans)
    return frames


def timelines_from(found: dict[str, list[dict]], spans: list[Span], splits: list[str]) -> Timelines:
    points, carried = _points(found, spans)
    return Timelines(spans=spans, splits=splits, points=points, carried=carried,
                     shares=_shares(found["shares"], spans), lag=_lag(found.get("lag", [])))


def timelines(wm: DataFrame, holders: DataFrame, t0: int, t1: int, splits: list[str], pad_ms: int,
              segments: DataFrame | None = None, cut: DataFrame | None = None) -> Timelines:
    """`wm`: the watermarks batch (why.watermarks_batch), `holders`: attribution.holders of it, `segments`: its
    lag_segments (none: no lag panel), `cut`: its `intervals` (computed here when not given). Two Spark jobs: the
    traffic spans, then every figure of them."""
    spans = traffic_spans(wm, t0, t1, pad_ms)
    return timelines_from(gather(timeline_frames(wm, holders, spans, t1, segments, cut)), spans, splits)
