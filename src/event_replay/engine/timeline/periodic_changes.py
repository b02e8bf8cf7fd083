"""Every split's watermark changes under periodic emission, as DataFrames: the closed forms of
`split_changes.py` (which has the derivation), computed per split with window functions.

A split's rows become groups, one per tick with rows (split, t, max_event_time); from each group and the number
of ticks until the next one follow its first published value, its silence-advance ramp and when it goes idle.
The changes are where the (value, idle) pair differs from the one before, starting from (-inf, not idle).
"""
from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from ...semantics.config import JobConfig
from ...semantics.watermark_config import WatermarkConfig
from ...spark import local_frame
from ..contract import NEG_INF
from .carry import Ticks
from .frames import checkpoint, lit


def split_changes(rows: DataFrame, cfg: JobConfig, main_splits: list[str], ticks: Ticks,
                  pseudo: DataFrame | None) -> tuple[DataFrame, DataFrame]:
    """(changes, groups): every change of every (non-side) split's (watermark, idle) pair on the tick timeline,
    as split, tick, value (for an idle split its last published value), idle; and the per-split row groups
    (split, t, max_event_time, max_ts, ...). With carried pseudo-groups (before the first tick) the changes
    start there; changes after the last tick are left out."""
    wmc = cfg.watermark
    g = checkpoint(_with_max_ts(_groups(rows, main_splits, wmc, ticks, pseudo), wmc, ticks.interval))
    events = [_first_values(g, wmc, ticks.interval)]
    if wmc.advance_after_silence_ms is not None:
        events.append(_silence_ramp(g, wmc, ticks.interval))
    if wmc.idle_timeout_ms is not None:
        events += _idle_events(rows.sparkSession, g, main_splits, wmc, ticks)
    ev = events[0]
    for e in events[1:]:
        ev = ev.unionByName(e)
    return _changes_only(ev).filter(F.col("tick") <= ticks.last), g


def _idle_ticks(wmc: WatermarkConfig, interval: int) -> int:
    """D: a split with rows at tick t is active at t and t + I (inactivity starts), then idle at the first tick
    more than the idle timeout after t + I, i.e. at t + (1 + D) * I."""
    return wmc.idle_timeout_ms // interval + 1


def _silence_ticks(wmc: WatermarkConfig, interval: int) -> int:
    """k0: at the k-th active tick after its rows a split's logical max is M + k*I; it advances when k*I > wait."""
    return wmc.advance_after_silence_ms // interval + 1


def _groups(rows: DataFrame, main_splits: list[str], wmc: WatermarkConfig, ticks: Ticks,
            pseudo: DataFrame | None) -> DataFrame:
    """One group per (split, tick with rows), with the ticks until the next group (n_ticks) and how many of
    them the split is active (n_act). Rows after the last tick are published at end_bound (the next range's
    first tick): their group is kept for the carried state (no change comes out of it here)."""
    groups = (rows.filter(F.col("split").isin(main_splits))
              .select("split", F.col("_tick").alias("t"), F.col("event_time").alias("max_event_time")))
    if pseudo is not None:
        groups = groups.unionByName(pseudo.filter(F.col("split").isin(main_splits))
                                    .select("split", "t", F.col("m").alias("max_event_time")))
    groups = groups.groupBy("split", "t").agg(F.max("max_event_time").alias("max_event_time"))
    g = (groups.withColumn("next_t", F.coalesce(F.lead("t").over(Window.partitionBy("split").orderBy("t")),
                                                lit(ticks.end_bound)))
         .withColumn("n_ticks", F.expr(f"(next_t - t) div {ticks.interval}")))
    if wmc.idle_timeout_ms is None:
        return g.withColumn("n_act", F.col("n_ticks"))
    return g.withColumn("n_act", F.least(F.col("n_ticks"), lit(1 + _idle_ticks(wmc, ticks.interval))))


def _with_max_ts(g: DataFrame, wmc: WatermarkConfig, interval: int) -> DataFrame:
    """max_ts after each group and last_pub, the last value the split publishes before its next group.

    With silence advance max_ts follows the max-plus recurrence M_i = max(M_{i-1} + adv_{i-1}, E_i), whose
    closed form is M_i = A_i + max_{j<=i}(E_j - A_j), A_i the sum of the advances before group i."""
    lag = wmc.lag_ms
    so_far = Window.partitionBy("split").orderBy("t")
    if wmc.advance_after_silence_ms is None:
        return (g.withColumn("max_ts", F.max("max_event_time").over(so_far.rowsBetween(Window.unboundedPreceding, 0)))
                .withColumn("last_pub", F.col("max_ts") - lag))
    k0 = _silence_ticks(wmc, interval)
    advances = F.col("n_act") >= k0
    g = g.withColumn("adv", F.when(advances, F.col("n_act") * interval).otherwise(lit(0)))
    g = g.withColumn("A", F.coalesce(F.sum("adv").over(so_far.rowsBetween(Window.unboundedPreceding, -1)), lit(0)))
    g = g.withColumn("max_ts", F.col("A") + F.max(F.col("max_event_time") - F.col("A")).over(
        so_far.rowsBetween(Window.unboundedPreceding, 0)))
    return g.withColumn("last_pub", F.when(advances, F.col("max_ts") + F.col("n_act") * interval - lag)
                        .otherwise(F.col("max_ts") - lag))


def _event(split, tick, value, idle: bool) -> list:
    return [split, tick.alias("tick"), value.alias("value"), F.lit(idle).alias("idle")]


def _first_values(g: DataFrame, wmc: WatermarkConfig, interval: int) -> DataFrame:
    """What each group publishes at its own tick (one interval more when the first silent tick advances)."""
    silence_first = wmc.advance_after_silence_ms is not None and _silence_ticks(wmc, interval) == 1
    return g.select(*_event("split", F.col("t"), F.col("max_ts") - wmc.lag_ms + (interval if silence_first else 0),
                            False))


def _silence_ramp(g: DataFrame, wmc: WatermarkConfig, interval: int) -> DataFrame:
    """At the k-th active tick after a group (k >= k0, k >= 2), max_ts + k*I - lag."""
    kstart = max(_silence_ticks(wmc, interval), 2)
    return (g.filter(F.col("n_act") >= kstart)
            .select("split", "t", "max_ts", F.explode(F.sequence(lit(kstart), F.col("n_act"))).alias("k"))
            .select(*_event("split", F.col("t") + (F.col("k") - 1) * interval,
                            F.col("max_ts") + F.col("k") * interval - wmc.lag_ms, False)))


def _idle_events(spark, g: DataFrame, main_splits: list[str], wmc: WatermarkConfig, ticks: Ticks) -> list[DataFrame]:
    """A split goes idle `span` ticks after a group that is not followed sooner; and from origin + D*I before its
    first row (the first tick counts as "no rows since the previous tick")."""
    d_ticks = _idle_ticks(wmc, ticks.interval)
    span = 1 + d_ticks
    after_group = g.filter(F.col("n_ticks") > span).select(
        *_event("split", F.col("t") + span * ticks.interval, F.col("last_pub"), True))
    idle0 = ticks.origin + d_ticks * ticks.interval
    firsts = g.groupBy("split").agg(F.min("t").alias("t1"))
    split_df = local_frame(spark, [(s,) for s in main_splits], "split string")
    before_first = (split_df.join(firsts, "split", "left")
                    .filter(F.coalesce(F.col("t1"), lit(ticks.end_bound)) > idle0)
                    .select(*_event("split", lit(idle0), lit(NEG_INF), True)))
    return [after_group, before_first]


def _changes_only(ev: DataFrame) -> DataFrame:
    """Only changes of the (value, idle) pair, starting from (-inf, not idle)."""
    per_split = Window.partitionBy("split").orderBy("tick")
    ev = (ev.withColumn("_pv", F.coalesce(F.lag("value").over(per_split), lit(NEG_INF)))
          .withColumn("_pi", F.coalesce(F.lag("idle").over(per_split), F.lit(False))))
    return ev.filter((F.col("value") != F.col("_pv")) | (F.col("idle") != F.col("_pi"))).drop("_pv", "_pi")
