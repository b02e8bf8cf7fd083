"""A span of consecutive partitions replayed at once, and which partition each of its outputs belongs to.

A history replayed partition by partition equals one replay of the whole range (docs/semantics.md,
"Partitions"), so a range of partitions is replayed as one span (a Partition from the first one's start to the
last one's end, continuing the first one's predecessor) and its outputs are then cut by partition. Each output
row goes to the partition whose one-by-one replay emits it:

    late rows            the partition its arrival time falls in (its folder: rows are cut to their folder);
    watermark changes    the partition its replay time falls in;
    quarantined rows     the folder it was read from;
    late firings         the partition of the row that caused it (`late_row`: its arrival time);
    timer firings        the partition during which the stream watermark reached its firing watermark `v`:
                         the first partition whose stream watermark at its end is >= v (the stream only rises,
                         and `v` is a value it moved to, so that is where it moved to it). With processing time
                         the clock at a partition's end is its end - 1;
    end-of-input firings the last partition (only it flushes).

The partition index is a column (0..n-1), then the partition's folder columns (`dt`, and `hour` for hours),
which the writer partitions by (io/span_output.py).
"""
from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ..engine.contract import EngineResult
from ..engine.windows import CAUSE_ARRIVAL
from ..io.quarantine import FOLDER_START
from ..semantics.durations import NEG_INF
from ..semantics.model import FIRE_END_OF_INPUT, FIRE_LATE_ROW
from .partitions import Partition

DAY, HOUR = "dt", "hour"  # the folder columns (Partition.subpath)


@dataclass(frozen=True)
class Span:
    """Consecutive partitions, all days or all hours, ascending without gaps."""

    parts: tuple[Partition, ...]

    def __post_init__(self):
        if not self.parts:
            raise ValueError("a span needs at least one partition")
        length = self.length
        for a, b in zip(self.parts, self.parts[1:]):
            if b.start_ms != a.end_ms or b.end_ms - b.start_ms != length:
                raise ValueError(f"{a.id} and {b.id} are not consecutive partitions of one length")

    @property
    def length(self) -> int:
        return self.parts[0].end_ms - self.parts[0].start_ms

    @property
    def hourly(self) -> bool:
        return self.parts[0].hourly

    @property
    def whole(self) -> Partition:
        """The span as one partition of the engine: the last one's id, from the first one's start."""
        return Partition(self.parts[-1].id, self.parts[0].start_ms, self.parts[-1].end_ms)

    @property
    def folder_columns(self) -> list[str]:
        return [DAY, HOUR] if self.hourly else [DAY]

    def index_at(self, time: Column) -> Column:
        """The partition a time falls in (times outside the span are clamped to its ends)."""
        i = F.floor((time - F.lit(self.parts[0].start_ms)) / F.lit(self.length)).cast("int")
        return F.least(F.greatest(i, F.lit(0)), F.lit(len(self.parts) - 1))

    def with_folders(self, df: DataFrame, index: Column) -> DataFrame:
        """`df` plus the folder columns of the partition `index` names (0-based)."""
        pick = index + F.lit(1)
        days = F.array(*[F.lit(p.id[:10]) for p in self.parts])
        out = df.withColumn(DAY, F.element_at(days, pick))
        if self.hourly:
            out = out.withColumn(HOUR, F.element_at(F.array(*[F.lit(p.id[11:13]) for p in self.parts]), pick))
        return out


def stream_at_ends(span: Span, watermarks: DataFrame, carried_wm: int | None, processing_time: bool) -> list[int]:
    """The stream watermark at the end of each partition of the span: from the stream's changes (one small
    aggregate over the watermarks output), continuing `carried_wm`; the clock (end - 1) for processing time."""
    if processing_time:
        return [p.end_ms - 1 for p in span.parts]
    moved = (watermarks.where((F.col("scope") == "stream") & F.col("watermark").isNotNull())
             .groupBy(span.index_at(F.col("replay_time")).alias("i")).agg(F.max("watermark").alias("w"))
             .collect())
    top = dict((r["i"], r["w"]) for r in moved)
    out, w = [], NEG_INF if carried_wm is None else carried_wm
    for i in range(len(span.parts)):
        w = max(w, top.get(i, w))
        out.append(w)
    return out


@dataclass(frozen=True)
class CutOutputs:
    """A span's outputs, each row with the folder columns of the partition it belongs to (io/span_output.py
    writes them)."""

    firings: DataFrame
    late: DataFrame
    watermarks: DataFrame
    quarantine: DataFrame
    watermarks_from_driver: bool = False  # as EngineResult's


def cut_by_partition(span: Span, result: EngineResult, stream_ends: list[int], quarantine: DataFrame) -> CutOutputs:
    """Every output of the span's replay (and the source's quarantine, by the folder read) cut by partition."""
    return CutOutputs(
        firings=span.with_folders(result.windows, firing_index(span, stream_ends)),
        late=span.with_folders(result.late_events, span.index_at(F.col("arrival_time"))),
        watermarks=span.with_folders(result.watermarks, span.index_at(F.col("replay_time"))),
        quarantine=span.with_folders(quarantine, span.index_at(F.col(FOLDER_START))).drop(FOLDER_START),
        watermarks_from_driver=result.watermarks_from_driver)


def firing_index(span: Span, stream_ends: list[int]) -> Column:
    """The partition that emits each firing (see the module doc)."""
    reason, v = F.col("fire_reason"), F.col("fire_watermark")
    return (F.when(reason == F.lit(FIRE_LATE_ROW), span.index_at(F.col(CAUSE_ARRIVAL)))
            .when((reason == F.lit(FIRE_END_OF_INPUT)) | v.isNull(), F.lit(len(span.parts) - 1))
            .otherwise(_first_reaching(v, stream_ends, 0, len(stream_ends) - 1)))


def _first_reaching(v: Column, ends: list[int], lo: int, hi: int) -> Column:
    """The first i in [lo, hi] with ends[i] >= v (hi if none), as a balanced tree of comparisons: log2(n) of them
    per row, not n (ends is non-decreasing)."""
    if lo >= hi:
        return F.lit(lo)
    mid = (lo + hi) // 2
    return F.when(v <= F.lit(ends[mid]), _first_reaching(v, ends, lo, mid)).otherwise(
        _first_reaching(v, ends, mid + 1, hi))
