"""Explaining each difference with what the replay knows, and what that suggests about the live job.

For every window that is not plainly equal (a difference, a duplicate, or equal values fired at another
watermark), the evidence (evidence.py: late rows, the split holding the stream when the replay fired it, idle
spans; split_read.py: rows per split in the source) is joined per window; each window's `explanation` is a
sentence per finding (window_text.py), and `hints` say what the differences together suggest (hints.py). The
settings that differ are diagnosed from those figures by diagnosis.py (run.py calls it after this).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from ..quality.prepare import count_star_column
from ..semantics.config import JobConfig
from .checkpoint import on_disk
from .evidence import fired_by, idle_evidence, idle_spans, late_evidence, late_match_evidence
from .hints import hint_frames, hints, hints_from
from .matching import WINDOW_ID
from .split_read import needing_bounds, source_evidence, with_missing_split
from .window_text import explanation

@dataclass
class Explained:
    windows: DataFrame  # the non-equal windows with evidence and explanation
    hints: list[dict[str, Any]]
    count_agg: str | None
    hint_frames: dict[str, DataFrame] = field(default_factory=dict)  # deferred: the hints' figures, to gather

    def with_hints(self, found: Mapping[str, list[dict[str, Any]]], cfg: JobConfig, aggs: Sequence[str]
                   ) -> "Explained":
        """The hints from the deferred figures, gathered by the caller with its own."""
        if not self.hint_frames:
            return self
        return Explained(self.windows, hints_from(found, cfg, aggs, self.count_agg), self.count_agg)


def explain(spark: SparkSession, cfg: JobConfig, classified: DataFrame, replay_late: DataFrame,
            watermarks: DataFrame, late_match: DataFrame | None, aggs: Sequence[str], has: frozenset[str],
            use_source: bool = True, to_explain: int | None = None, defer_hints: bool = False,
            source_bounds: Mapping[str, Any] | None = None) -> Explained:
    """`to_explain`: how many windows are not plainly equal when the caller knows it (the totals' differing,
    duplicate and other_watermark), else a Spark job asks. `defer_hints`: the hints' figures are left in
    `hint_frames` for the caller to gather with its own (then `with_hints`). `source_bounds`: the gathered row of
    `source_needing_bounds` (else a Spark job asks). The explained windows are checkpointed when first computed
    (by the caller's job that gathers their figures)."""

    cnt = count_star_column(cfg)
    cnt = cnt if cnt in aggs else None
    # a filter of the classified windows (checkpointed): recomputed by each join, cheaper than a job of its own
    diff = classified.where((F.col("class") != "equal") | F.col("timing").isNotNull())
    if (diff.isEmpty() if to_explain is None else not to_explain):
        return Explained(windows=diff.withColumn("explanation", F.lit(None).cast("string")), hints=[], count_agg=cnt)
    ev = _with_late(diff, replay_late, late_match, cfg)
    fired = fired_by(watermarks, diff)
    ev = ev.join(fired, WINDOW_ID, "left")
    ev = ev.join(idle_evidence(idle_spans(watermarks), fired, cfg), WINDOW_ID, "left")
    ev = ev.fillna(0, ["replay_late_n"])
    if cnt is not None:
        ev = ev.withColumn("count_delta", F.col(f"live_{cnt}") - F.col(f"replay_{cnt}"))
    else:
        ev = ev.withColumn("count_delta", F.lit(None).cast("long"))
    source = _source_rows(spark, cfg, ev, source_bounds) if use_source and cnt is not None else None
    ev = with_missing_split(ev, source, cnt or "")
    ev = ev.withColumn("explanation", explanation(cfg, aggs, cnt, has, late_match is not None))
    ev = on_disk(ev)
    if defer_hints:
        return Explained(windows=ev, hints=[], count_agg=cnt, hint_frames=hint_frames(ev, aggs, cnt, late_match))
    return Explained(windows=ev, hints=hints(ev, cfg, aggs, cnt, has, late_match), count_agg=cnt)


def _with_late(diff: DataFrame, replay_late: DataFrame, late_match: DataFrame | None, cfg: JobConfig) -> DataFrame:
    ev = diff.join(late_evidence(replay_late, cfg, diff), WINDOW_ID, "left")
    if late_match is not None:
        return ev.join(late_match_evidence(late_match, cfg, diff), WINDOW_ID, "left")
    return ev.withColumn("late_replay_only_n", F.lit(None).cast("long")) \
        .withColumn("late_live_only_n", F.lit(None).cast("long"))


def _lacking(count_delta: Column) -> Column:
    """The windows whose rows the live output lacks (fewer, or none): the windows the source is read for."""
    return (F.col("class") == "replay_only") | ((F.col("class") == "value_differs") & (count_delta < 0))


def _source_rows(spark: SparkSession, cfg: JobConfig, ev: DataFrame, bounds: Mapping[str, Any] | None
                 ) -> DataFrame | None:
    """Rows per split in the source of the windows whose rows the live output lacks (fewer, or none)."""
    return source_evidence(spark, cfg, ev.where(_lacking(F.col("count_delta"))).select(*WINDOW_ID), bounds)


def source_needing_bounds(cfg: JobConfig, classified: DataFrame, aggs: Sequence[str]) -> DataFrame | None:
    """The span and keys of the windows explain reads the source for (split_read.needing_bounds), from the
    classified windows, to gather before explain; None when it reads none (no count(*) compared)."""
    cnt = count_star_column(cfg)
    if cnt is None or cnt not in aggs:
        return None
    return needing_bounds(classified.where(_lacking(F.col(f"live_{cnt}") - F.col(f"replay_{cnt}")))
                          .select(*WINDOW_ID))
