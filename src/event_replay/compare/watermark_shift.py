"""How the live job's watermark relates to the replay's, from the live fire watermarks (the sink's `fire_watermark`).

A split's own watermark is max_ts - lag (lag = max out-of-orderness + 1, or + 0 in the SQL flavour), whatever the
idle timeout, the allowed lateness or the emission interval: those only choose which split's value the stream
takes (the minimum over the splits not idle) and when. So every watermark the live job fired at is a value one of
the replay's splits published, shifted by one constant: shift = live lag - replay lag. The figures:
- `shift_ms`, `shift_share`: the constant that puts the most live fire watermarks onto a published split value, and
  the share it puts there (of at most SAMPLE distinct live fire watermarks); `zero_share`: the share without shift;
- `pairs`, `same_first`: the windows both sides fired (the live's first firing with a fire watermark, the replay's
  not the end-of-input flush), and how many of them each side first fired at the same watermark;
- `other_first`: those windows (key, bounds) fired first at another watermark, for the idle evidence.
"""
from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from ..semantics.config import JobConfig
from ..semantics.durations import NEG_INF, POS_INF
from ..spark_jobs import first_rows
from .checkpoint import on_disk
from .matching import WINDOW_ID

SAMPLE = 2000  # distinct live fire watermarks tried (each against the split values within REACH of it)
MIN_REACH_MS = 60_000


@dataclass
class ShiftFigures:
    pairs: int
    same_first: int
    sampled: int
    zero_share: float
    shift_ms: int | None
    shift_share: float
    other_first: DataFrame  # WINDOW_ID, replay_first_watermark_ms, live_first_watermark_ms

    @property
    def found(self) -> bool:
        """One constant puts (nearly) every live fire watermark on a replay split value."""
        return self.shift_ms is not None and self.shift_share >= 0.9


def _split_values(watermarks: DataFrame) -> DataFrame:
    finite = F.col("watermark_ms").between(NEG_INF + 1, POS_INF - 1)
    return watermarks.where((F.col("scope") == "split") & finite).select(F.col("watermark_ms").alias("v")).distinct()


def _share_frames(live_wms: DataFrame, values: DataFrame, reach: int) -> dict[str, DataFrame]:
    """The sample's size, the best shift and the zero shift (each candidate shift within `reach`: how many sampled
    live fire watermarks it puts onto a split value), small frames to gather."""
    sample = first_rows(live_wms.select(F.col("live_first_watermark_ms").alias("f")).distinct()
                        .withColumn("h", F.xxhash64("f")), ["h", "f"], SAMPLE).select("f")
    # A range join on buckets of `reach`: each f meets the values of its bucket and the two next to it.
    f = sample.withColumn("b", F.explode(F.array(*[F.floor(F.col("f") / reach) + k for k in (-1, 0, 1)])))
    v = values.withColumn("b", F.floor(F.col("v") / reach))
    d = f.join(v, "b").select((F.col("v") - F.col("f")).alias("d"), "f").where(F.abs("d") <= reach)
    per_shift = d.groupBy("d").agg(F.count_distinct("f").alias("n"))
    ranked = per_shift.select("d", "n", (-F.col("n")).alias("minus_n"), F.abs("d").alias("abs_d"))
    return {"shift_sampled": sample.agg(F.count(F.lit(1)).alias("n")),
            "shift_top": first_rows(ranked, ["minus_n", "abs_d", "d"], 1).select("d", "n"),
            "shift_zero": per_shift.where(F.col("d") == 0)}


def shift_frames(windows: DataFrame, watermarks: DataFrame, cfg: JobConfig) -> tuple[dict[str, DataFrame], DataFrame]:
    """The small frames of the figures (to gather with others in one Spark job) and the windows both sides fired
    with their first fire watermarks; `windows`: the classified windows, with the matching's
    live_first_watermark_ms (matching.py: no second read of the live side)."""
    both = windows.where(F.col("in_replay") & F.col("in_live") & (F.col("replay_first_reason") != "end_of_input"))
    firsts = both.where(F.col("live_first_watermark_ms").isNotNull()).select(
        *WINDOW_ID, "replay_first_watermark_ms", "live_first_watermark_ms")
    # checkpointed when first computed (by the job that gathers the figures): every figure below and the silences
    # read it
    firsts = on_disk(firsts)
    same = F.col("replay_first_watermark_ms") == F.col("live_first_watermark_ms")
    reach = max(MIN_REACH_MS, 4 * cfg.watermark.max_out_of_orderness_ms)
    frames = {"shift_pairs": firsts.agg(F.count(F.lit(1)).alias("pairs"), F.sum(same.cast("long")).alias("same")),
              **_share_frames(firsts, _split_values(watermarks), reach)}
    return frames, firsts


def shift_from(found: dict[str, list[dict]], firsts: DataFrame) -> ShiftFigures:
    """The figures from the gathered frames of shift_frames."""
    counts = found["shift_pairs"][0]
    sampled = int(found["shift_sampled"][0]["n"]) if counts["pairs"] else 0
    top, zero = found["shift_top"], found["shift_zero"]
    shares = {0: int(zero[0]["n"]) if zero else 0, **({int(top[0]["d"]): int(top[0]["n"])} if top else {})}
    best = max(shares.items(), key=lambda kv: (kv[1], -abs(kv[0])))
    share = (lambda n: n / sampled if sampled else 0.0)
    same = F.col("replay_first_watermark_ms") == F.col("live_first_watermark_ms")
    return ShiftFigures(pairs=int(counts["pairs"] or 0), same_first=int(counts["same"] or 0), sampled=sampled,
                        zero_share=share(shares[0]), shift_ms=best[0] if best[1] else None,
                        shift_share=share(best[1]), other_first=firsts.where(~same))

