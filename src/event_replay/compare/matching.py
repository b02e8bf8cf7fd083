"""Matching the live firings to the replay's, per (key, window), and the live late rows to the replay's.

Windows (`match_windows`), one row per (key, window_start, window_end) present on either side:
- the live rows of a window are first reduced to its *versions*: distinct (aggregates, fire_index) values. Extra
  copies of a version are duplicates (an at-least-once sink re-emitting after a restart), counted in
  `live_copies` and never compared twice;
- last firing (default): the replay's last firing (highest fire_index) against the live's last version: by the
  live's fire_index, else its fire watermark, else its fire time; with none of those and several versions, the
  version equal to the replay's last firing if there is one (the sink kept earlier firings);
- every firing (`keeps_updates`: the sink appended each firing, allowed-late re-firings too): the replay's
  firing of fire_index n against the live version at position n of its order (fire_index, fire watermark, fire
  time, then the values), pair by pair; the window agrees when every pair does and both have as many firings.
  Each side is one aggregate per window (its firings, its versions, as arrays in that order) and the pairs are
  compared inside the joined row: at 10M windows, a pair is never a row of its own.

Late rows (`match_late`): by (split, offset) when the live late output has both, else by (key, time) with
multiplicity; extra live copies of one (split, offset) are duplicates.

Columns of the window match: key, window_start_ms, window_end_ms, in_replay, in_live, replay_<agg>/live_<agg>
(last firing / last version), eq_<agg> (under the aggregate's rule), values_equal, firings_compared,
firings_equal, replay_firings, live_versions, live_rows, live_copies, replay/live fire watermark, replay fire
reason, replay's first-firing watermark and reason, live fire time, the live rows' first fire watermark
(live_first_watermark_ms), replay_partition, live_partition.
"""
from __future__ import annotations

from functools import reduce
from typing import Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ..semantics.durations import NEG_INF, POS_INF
from .live import AGG_PREFIX
from .rules import Rule, equal

WINDOW_ID = ["key", "window_start_ms", "window_end_ms"]
# The session settings a match is planned with (the caller sets them around the action that plans it): each side's
# aggregates (the arrays of firings and versions, collect_list) sort the side's rows by window once, in the order
# the join reads them. Spark's default for them, the object hash aggregate, falls back to sorting after 128 windows,
# in its partial and its final step, and the join sorts again: at 10M windows, 2.4 GB spilled.
PLAN_SETTINGS = {"spark.sql.execution.useObjectHashAggregateExec": "false"}


def _all(cols: Sequence[Column]) -> Column:
    return reduce(lambda a, b: a & b, cols, F.lit(True))


def _replay_fire_wm() -> Column:
    # An end-of-input firing has no watermark in the outputs: it fired when the watermark went to +inf.
    return F.when(F.col("fire_reason") == "end_of_input", F.lit(POS_INF)).otherwise(F.col("fire_watermark_ms"))


def replay_windows(firings: DataFrame, aggs: Sequence[str], every: bool = False) -> DataFrame:
    """Per window: the last firing's values, how many firings, the first and last firing's watermark and reason;
    with `every`, also `_firings`: every firing's (n = fire_index, values), ordered by n."""
    last = F.struct(*[F.col(AGG_PREFIX + a).alias(a) for a in aggs], "fire_watermark_ms", "fire_reason",
                    "replay_partition")
    first = F.struct("fire_watermark_ms", "fire_reason")
    each = [F.array_sort(F.collect_list(F.struct(F.col("fire_index").alias("n"),
                                                 *[F.col(AGG_PREFIX + a).alias(a) for a in aggs])))
            .alias("_firings")] if every else []
    g = firings.withColumn("fire_watermark_ms", _replay_fire_wm()).groupBy(*WINDOW_ID).agg(
        F.count(F.lit(1)).alias("replay_firings"), F.max_by(last, "fire_index").alias("_last"),
        F.min_by(first, "fire_index").alias("_first"), *each)
    return g.select(*WINDOW_ID, "replay_firings",
                    *[F.col(f"_last.{a}").alias(f"replay_{a}") for a in aggs],
                    F.col("_last.fire_watermark_ms").alias("replay_fire_watermark_ms"),
                    F.col("_last.fire_reason").alias("replay_fire_reason"),
                    F.col("_first.fire_watermark_ms").alias("replay_first_watermark_ms"),
                    F.col("_first.fire_reason").alias("replay_first_reason"),
                    F.col("_last.replay_partition").alias("replay_partition"), *(["_firings"] if every else []))


def live_versions(live: DataFrame, aggs: Sequence[str]) -> DataFrame:
    """The distinct live firings of each window (aggregates and fire_index), their copies, and the first fire
    watermark of their rows."""
    return live.groupBy(*WINDOW_ID, "fire_index", *[AGG_PREFIX + a for a in aggs]).agg(
        F.count(F.lit(1)).alias("copies"), F.max("fire_watermark_ms").alias("fire_watermark_ms"),
        F.max("fire_time_ms").alias("fire_time_ms"), F.min("live_partition").alias("live_partition"),
        F.min("fire_watermark_ms").alias("first_watermark_ms"))


def _order(has: frozenset[str], aggs: Sequence[str]) -> list[Column]:
    """The live versions' firing order: fire_index, fire watermark, fire time (what the sink has), then values."""
    out = []
    for role, col in (("fire_index", "fire_index"), ("fire_watermark", "fire_watermark_ms"),
                      ("fire_time", "fire_time_ms")):
        if role in has:
            out.append(F.coalesce(F.col(col), F.lit(NEG_INF)))
    return out + [F.col(AGG_PREFIX + a) for a in aggs]


def match_windows(replay: DataFrame, live: DataFrame, rules: Sequence[Rule], has: frozenset[str],
                  keeps_updates: bool) -> DataFrame:
    """Also `live_first_watermark_ms`: the live rows' first fire watermark (null: none has one)."""
    aggs = [r.aggregate for r in rules]
    # Each side cut by window once (one shuffle, one scan): every aggregate and join below is keyed by the window
    # (and more), so it needs no shuffle of its own.
    replay, live = replay.repartition(*WINDOW_ID), live.repartition(*WINDOW_ID)
    rw = replay_windows(replay, aggs, every=keeps_updates)
    versions = live_versions(live, aggs)
    if keeps_updates:
        return _match_every(rw, versions, rules, has)
    return _match_last(rw, versions, rules, has)


def _live_windows(versions: DataFrame, aggs: Sequence[str], key: Column, every: bool = False) -> DataFrame:
    """Per window: its versions, rows, first fire watermark and the last version by `key`; with `every`, also
    `_versions`: every version's values in firing order (`key` first in each element, so it orders them)."""
    chosen = [*[F.col(AGG_PREFIX + a).alias(a) for a in aggs], "fire_watermark_ms", "fire_time_ms", "live_partition"]
    each = [F.array_sort(F.collect_list(F.struct(key.alias("_order"), *chosen))).alias("_versions")] if every else []
    lw = versions.groupBy(*WINDOW_ID).agg(
        F.count(F.lit(1)).alias("live_versions"), F.sum("copies").alias("live_rows"),
        F.max_by(F.struct(*chosen), key).alias("_c"), F.min("first_watermark_ms").alias("live_first_watermark_ms"),
        *each)
    return lw.select(*WINDOW_ID, "live_versions", "live_rows",
                     *[F.col(f"_c.{a}").alias(f"live_{a}") for a in aggs],
                     F.col("_c.fire_watermark_ms").alias("live_fire_watermark_ms"),
                     F.col("_c.fire_time_ms").alias("live_fire_time_ms"),
                     F.col("_c.live_partition").alias("live_partition"), "live_first_watermark_ms",
                     *(["_versions"] if every else []))


def _match_last(rw: DataFrame, versions: DataFrame, rules: Sequence[Rule], has: frozenset[str]) -> DataFrame:
    aggs = [r.aggregate for r in rules]
    ordered = bool(has & {"fire_index", "fire_watermark", "fire_time"})
    if ordered:
        key = F.struct(*_order(has, aggs))
    else:  # no firing order: the version equal to the replay's last firing, if any, stands for the last one
        j = versions.join(rw.select(*WINDOW_ID, *[f"replay_{a}" for a in aggs]), WINDOW_ID, "left")
        eq = _all([equal(r, F.col(AGG_PREFIX + r.aggregate), F.col(f"replay_{r.aggregate}")) for r in rules])
        versions = j.withColumn("_eq", eq.cast("int")).drop(*[f"replay_{a}" for a in aggs])
        key = F.struct(F.col("_eq"), *_order(has, aggs))
    m = _joined(rw, _live_windows(versions, aggs, key))
    eqs = {r.aggregate: equal(r, F.col(f"live_{r.aggregate}"), F.col(f"replay_{r.aggregate}")) for r in rules}
    both = F.col("in_replay") & F.col("in_live")
    m = m.select("*", *[F.when(both, e).otherwise(F.lit(False)).alias(f"eq_{a}") for a, e in eqs.items()])
    values_equal = both & _all([F.col(f"eq_{a}") for a in aggs])
    return m.select("*", values_equal.alias("values_equal"),
                    F.when(both, 1).otherwise(0).alias("firings_compared"),
                    F.when(values_equal, 1).otherwise(0).alias("firings_equal"))


def _joined(rw: DataFrame, lw: DataFrame) -> DataFrame:
    m = rw.withColumn("in_replay", F.lit(True)).join(lw.withColumn("in_live", F.lit(True)), WINDOW_ID, "full")
    return m.fillna(False, ["in_replay", "in_live"]).fillna(0, ["replay_firings", "live_versions", "live_rows"]) \
        .withColumn("live_copies", F.col("live_rows") - F.col("live_versions"))


def _pairs(rules: Sequence[Rule]) -> tuple[Column, Column]:
    """(pairs, equal pairs) of a window on both sides, from its `_firings` (replay, by fire_index n) and
    `_versions` (live, in firing order): replay firing n is paired with the live version at position n; a firing
    or version without a partner is a pair of its own, equal only as null against null (rules.equal)."""
    firings, versions = F.col("_firings"), F.col("_versions")
    n_live = F.size(versions)

    def paired(x: Column) -> Column:
        return (x["n"] >= 0) & (x["n"] < n_live)

    def pair_eq(live: Column | None, replay: Column | None, template: Column) -> Column:
        # a missing side is a null of the other side's type (F.when without otherwise)
        def side(c: Column | None, a: str) -> Column:
            return c[a] if c is not None else F.when(F.lit(False), template[a])
        return _all([equal(r, side(live, r.aggregate), side(replay, r.aggregate)) for r in rules])

    both_eq = F.size(F.filter(firings, lambda x: paired(x) & pair_eq(
        F.get(versions, x["n"].cast("int")), x, x)))
    replay_alone = F.filter(firings, lambda x: ~paired(x))
    live_alone = F.filter(versions, lambda y, i: ~F.exists(firings, lambda x: x["n"] == i))
    n_paired = F.size(firings) - F.size(replay_alone)
    pairs = F.size(firings) + n_live - n_paired
    equal_pairs = (both_eq + F.size(F.filter(replay_alone, lambda x: pair_eq(None, x, x)))
                   + F.size(F.filter(live_alone, lambda y: pair_eq(y, None, y))))
    # Nearly every window fired once on each side: one pair, compared without the array functions (Spark evaluates
    # their lambdas row by row, outside the generated code)
    first, version = F.get(firings, 0), F.get(versions, 0)
    single = (F.size(firings) == 1) & (n_live == 1) & (first["n"] == 0)
    return (F.when(single, F.lit(1)).otherwise(pairs),
            F.when(single, pair_eq(version, first, first).cast("int")).otherwise(equal_pairs))


def _match_every(rw: DataFrame, versions: DataFrame, rules: Sequence[Rule], has: frozenset[str]) -> DataFrame:
    # One aggregate per side (each window's firings, its versions, as arrays in firing order) and one join: the
    # pairs are compared inside each row, never a row of their own.
    aggs = [r.aggregate for r in rules]
    m = _joined(rw, _live_windows(versions, aggs, F.struct(*_order(has, aggs)), every=True))
    both = F.col("in_replay") & F.col("in_live")
    pairs, equal_pairs = _pairs(rules)
    m = m.select("*", *[F.when(both, equal(r, F.col(f"live_{r.aggregate}"), F.col(f"replay_{r.aggregate}")))
                        .otherwise(F.lit(False)).alias(f"eq_{r.aggregate}") for r in rules],
                 F.when(both, equal_pairs).alias("_equal_pairs"), F.when(both, pairs).alias("_pairs"))
    values_equal = (both & (F.col("_equal_pairs") == F.col("_pairs"))
                    & (F.col("replay_firings") == F.col("live_versions")))
    compared = F.least(F.col("replay_firings"), F.col("live_versions"))
    return m.select(*[c for c in m.columns if c not in ("_firings", "_versions", "_equal_pairs", "_pairs")],
                    values_equal.alias("values_equal"),
                    F.when(both, compared).otherwise(0).alias("firings_compared"),
                    F.when(both, F.col("_equal_pairs")).otherwise(0).cast("long").alias("firings_equal"))


# -- late rows ------------------------------------------------------------------------------------------------

def match_late(replay_late: DataFrame, live_late: DataFrame, identity: str) -> DataFrame:
    """One row per late row identity: in_replay_n, in_live_n (copies), matched, replay_only, live_only,
    live_duplicates, and the row's key, time, split, offset, late watermark, partition."""
    if identity == "split, offset":
        lv = live_late.groupBy(F.col("late_split").alias("split"), F.col("late_offset").alias("offset")).agg(
            F.count(F.lit(1)).alias("in_live_n"), F.first("late_key").alias("live_key"),
            F.first("late_time_ms").alias("live_time_ms"))
        rp = replay_late.withColumn("in_replay_n", F.lit(1))
        m = rp.join(lv, ["split", "offset"], "full").fillna(0, ["in_replay_n", "in_live_n"])
        m = m.withColumn("key", F.coalesce("key", "live_key")) \
            .withColumn("time_ms", F.coalesce("time_ms", "live_time_ms"))
        m = m.withColumn("live_duplicates", F.greatest(F.col("in_live_n") - 1, F.lit(0)))
    else:
        lv = live_late.groupBy(F.col("late_key").alias("key"), F.col("late_time_ms").alias("time_ms")).agg(
            F.count(F.lit(1)).alias("in_live_n"))
        rp = replay_late.groupBy("key", "time_ms").agg(
            F.count(F.lit(1)).alias("in_replay_n"), F.first("split").alias("split"), F.first("offset").alias("offset"),
            F.min("late_watermark_ms").alias("late_watermark_ms"), F.min("arrival_ms").alias("arrival_ms"),
            F.min("replay_partition").alias("replay_partition"))
        m = rp.join(lv, ["key", "time_ms"], "full").fillna(0, ["in_replay_n", "in_live_n"])
        m = m.withColumn("live_duplicates", F.lit(0))
    live_n = F.col("in_live_n") - F.col("live_duplicates")
    matched = F.least(F.col("in_replay_n"), live_n)
    return m.select("key", "time_ms", "split", "offset", "arrival_ms", "late_watermark_ms", "replay_partition",
                    "in_replay_n", "in_live_n", "live_duplicates", matched.alias("matched"),
                    (F.col("in_replay_n") - matched).alias("replay_only"), (live_n - matched).alias("live_only"))
