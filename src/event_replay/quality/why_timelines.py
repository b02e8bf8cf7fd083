"""The data behind the why-report's timelines, aggregated in Spark so that only small tables reach the driver.

A replayed history is often sparse: a few minutes of traffic a day, and idle nights in between. Plotted over the
whole replay clock, the traffic shrinks to a few vertical jumps. So the timelines zoom on the *traffic spans*: the
stretches of the replay clock where some split's rows moved its watermark, cut where no split published anything for
at least GAP_SHARE of the whole range and MIN_GAP_MS (at most MAX_SPANS spans: the shortest gaps are not cut). Each span gets its own
column of panels, padded so that the idleness which follows the traffic shows.

Per span, every series (the stream and each split) is downsampled to SPAN_BUCKETS buckets (the highest watermark per
bucket; the value carried into the span comes along so the step starts right), and two kinds of stretches are
reduced to the buckets they cover: when a split (or the stream) was idle, and which split held the stream's
watermark (the split whose published watermark equalled the stream value, see attribution.holders).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

SPAN_BUCKETS = 400  # points per series and span: about one per pixel column of a span's panel
ACTIVITY_BUCKETS = 2000  # resolution at which gaps in the traffic are found
GAP_SHARE = 0.05  # a silence of at least this share of the replayed range separates two spans,
MIN_GAP_MS = 600_000  # and of at least this long: a short log's emission intervals are no silence
MAX_SPANS = 4  # columns of the figure; more would be too narrow to read
MIN_PAD_MS = 1000
MIN_PLOT_MS, MAX_PLOT_MS = -62_135_596_800_000, 253_402_300_799_999  # what datetime can show: +-inf are not
IDLE, HELD = "idle", "held"


@dataclass(frozen=True)
class Span:
    """[start_ms, end_ms] of the replay clock shown in one column; traffic_ms the part with traffic."""
    start_ms: int
    end_ms: int
    traffic_ms: tuple[int, int]

    def bucket_ms(self) -> float:
        return max(1, self.end_ms - self.start_ms + 1) / SPAN_BUCKETS


@dataclass
class Timelines:
    spans: list[Span]
    splits: list[str]
    # (series, span, time_ms, watermark_ms): highest watermark per bucket, sorted by time
    points: list[tuple[str, int, int, int]] = field(default_factory=list)
    # (series, span) -> the watermark the series had when the span starts (None: none published yet)
    carried: dict[tuple[str, int], int | None] = field(default_factory=dict)
    # (kind, series, span) -> sorted bucket indexes the stretch covers; kind IDLE or HELD
    stretches: dict[tuple[str, str, int], list[int]] = field(default_factory=dict)

    def series_points(self, series: str, span: int) -> list[tuple[int, int]]:
        return [(t, w) for s, i, t, w in self.points if s == series and i == span]


def series_column(wm: DataFrame) -> Column:
    return F.when(F.col("scope") == "stream", F.lit("stream")).otherwise(F.col("split"))


def traffic_spans(wm: DataFrame, t0: int, t1: int, pad_ms: int) -> list[Span]:
    """The spans of the replay clock with traffic (module doc); the whole range when nothing was published."""
    active = wm.where((F.col("scope") == "split") & ~F.col("idle") & F.col("watermark_ms").isNotNull())
    width = max(1, t1 - t0 + 1)
    coarse = F.floor((F.col("replay_time_ms") - F.lit(t0)) * F.lit(ACTIVITY_BUCKETS) / F.lit(width)).cast("long")
    busy = sorted(r.b for r in active.select(coarse.alias("b")).distinct().collect())
    if not busy:
        return [Span(t0, t1, (t0, t1))]
    groups = _cut(busy, max(1, int(GAP_SHARE * ACTIVITY_BUCKETS), int(MIN_GAP_MS * ACTIVITY_BUCKETS / width)))
    which = F.lit(None).cast("int")
    for i, (lo, hi) in reversed(list(enumerate(groups))):
        which = F.when(coarse.between(lo, hi), F.lit(i)).otherwise(which)
    exact = {r.i: (r.a, r.z) for r in active.groupBy(which.alias("i"))
             .agg(F.min("replay_time_ms").alias("a"), F.max("replay_time_ms").alias("z")).collect()}
    spans = []
    for i in range(len(groups)):
        a, z = exact[i]
        pad = max(pad_ms, (z - a) // 10, MIN_PAD_MS)
        span = Span(max(t0, a - pad), min(t1, z + pad), (a, z))
        if spans and span.start_ms <= spans[-1].end_ms:  # padded into each other: one span
            span = Span(spans[-1].start_ms, span.end_ms, (spans[-1].traffic_ms[0], z))
            spans.pop()
        spans.append(span)
    return spans


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
    return F.least(F.lit(SPAN_BUCKETS - 1), F.floor((t - F.lit(s.start_ms)) / F.lit(s.bucket_ms())).cast("int"))


def _points(series: DataFrame, spans: list[Span]):
    plottable = series.where(~F.col("idle") & F.col("watermark_ms").between(MIN_PLOT_MS, MAX_PLOT_MS))
    t = F.col("replay_time_ms")
    which = _span_of(t, spans)
    bucket = F.lit(None).cast("int")
    for i, s in enumerate(spans):
        bucket = F.when(which == i, _bucket(t, s)).otherwise(bucket)
    rows = (plottable.where(which.isNotNull())
            .groupBy("series", which.alias("span"), bucket.alias("b"))
            .agg(F.min("replay_time_ms").alias("t"), F.max("watermark_ms").alias("w")).collect())
    before = plottable.groupBy("series").agg(*[F.max(F.when(t < s.start_ms, F.col("watermark_ms"))).alias(f"s{i}")
                                               for i, s in enumerate(spans)]).collect()
    points = sorted((r.series, r.span, r.t, r.w) for r in rows)
    carried = {(r.series, i): r[f"s{i}"] for r in before for i in range(len(spans))}
    return points, carried


def _stretches(intervals: DataFrame, spans: list[Span]) -> dict[tuple[str, str, int], list[int]]:
    """intervals (kind, series, a, z): the buckets of each span they cover."""
    parts = []
    for i, s in enumerate(spans):
        inside = intervals.where((F.col("a") <= s.end_ms) & (F.col("z") >= s.start_ms))
        lo = _bucket(F.greatest(F.col("a"), F.lit(s.start_ms)), s)
        hi = _bucket(F.least(F.col("z"), F.lit(s.end_ms)), s)
        parts.append(inside.select("kind", "series", F.lit(i).alias("span"), F.explode(F.sequence(lo, hi)).alias("b")))
    if not parts:
        return {}
    union = parts[0]
    for p in parts[1:]:
        union = union.unionByName(p)
    found: dict[tuple[str, str, int], list[int]] = {}
    for r in union.distinct().collect():
        found.setdefault((r.kind, r.series, r.span), []).append(r.b)
    return {k: sorted(v) for k, v in found.items()}


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


def timelines(wm: DataFrame, holders: DataFrame, t0: int, t1: int, splits: list[str], pad_ms: int) -> Timelines:
    """`wm`: the watermarks batch (why.watermarks_batch), `holders`: attribution.holders of it."""
    spans = traffic_spans(wm, t0, t1, pad_ms)
    series = wm.withColumn("series", series_column(wm))
    points, carried = _points(series, spans)
    return Timelines(spans=spans, splits=splits, points=points, carried=carried,
                     stretches=_stretches(_intervals(series, holders, t1), spans))
