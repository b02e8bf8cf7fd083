"""A what-if grid's variants replayed in one pass keyed by variant: each variant's outputs are exactly those of
engine.replay with its config (tests/tuning/test_keyed.py).

- Stage 1, the timeline, stays per variant and on the driver: the grid varies the delay, the idle timeout and the
  allowed lateness, never the tick interval, so one per-(split, tick) table of the rows (`shared_tick_partials`:
  the read's, else one aggregate) serves every variant, whose timeline is then numpy passes and a lookup column
  (`wm_before`) on the rows: no Spark job per variant.
- Stage 2, the windows and the late rows, runs once over the union of the variants' rows, each with its variant
  inside the key (`VariantKeys`: one string of both for a string key, else `struct(variant, key)`): a (variant,
  key) is a key like any other to the windows stage, so its shuffle, sort and aggregates are one plan and one pass
  for the grid, and each timer firing looks its watermark up in its own variant's stream values
  (`VariantLookup`). The allowed lateness is a constant of that stage, so variants that differ in it take one pass
  per distinct value. The outputs carry a `variant` column.
  `side_by_side` gives variants replayed one by one the same shape: the figures (figures.py) read either.

The pass applies to event or ingestion time with periodic emission, tumbling, sliding or cumulate windows, a
timeline computed on the driver and the engine's extension (`keyed_replay` gives None otherwise, and the runner
replays the variants one by one).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import reduce
from typing import Sequence

import numpy as np
import pyarrow as pa
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from .. import engine
from ..engine.contract import NEG_INF, EngineResult
from ..engine.lookups import available, ceiling_value
from ..engine.timeline import compute_timeline_carried
from ..engine.timeline.tick_table import groups_limit
from ..engine.windowed import windowed_only
from ..engine.windows import compute_windows_with_elements, windows_partitions
from ..io.read_order import TickPartials
from ..semantics.config import JobConfig
from . import variant_key

VARIANT = "variant"


@dataclass(frozen=True)
class VariantKeys:
    """The variant inside the key: one string (variant_key.py: a sort by it has a prefix) when the key is a string,
    else struct(variant, key). `digits`: None for the struct."""
    digits: int | None

    @staticmethod
    def of(rows: DataFrame, variants: int) -> "VariantKeys":
        plain = isinstance(rows.schema["key"].dataType, T.StringType)
        return VariantKeys(variant_key.width(range(variants)) if plain else None)

    def key(self, i: int) -> Column:
        k = F.col("key")
        if self.digits is None:
            return F.struct(F.lit(i).alias("variant"), k.alias("key"))
        return variant_key.tagged(F.lit(i), k, self.digits)

    def variant(self) -> Column:
        k = F.col("key")
        return k["variant"] if self.digits is None else variant_key.variant_of(k, self.digits)

    def unkeyed(self) -> Column:
        k = F.col("key")
        return k["key"] if self.digits is None else variant_key.value_of(k, self.digits)


def applies(spark, cfgs: Sequence[JobConfig]) -> bool:
    """Whether the keyed pass can replay these variants (module doc)."""
    base = cfgs[0]
    return (base.window.time != "processing" and base.watermark.periodic
            and base.window.type in ("tumbling", "sliding", "cumulate") and available(spark)
            and len({c.watermark.interval_ms for c in cfgs}) == 1)


def shared_tick_partials(rows: DataFrame, cfg: JobConfig, read: TickPartials | None) -> pa.Table | None:
    """The rows' per-(split, tick) entries every variant's timeline starts from: the read's if it took them at the
    grid's interval, else one aggregate (one Spark job for the grid); None above the driver's bound (each variant
    then takes the engine's own path)."""
    interval = cfg.watermark.interval_ms
    if read is not None and read.interval == interval:
        table = read.take()
        if table is not None:
            return table
    a = F.col("arrival_time")
    limit = groups_limit(rows.sparkSession)
    table = (rows.groupBy(F.col("split").cast("string").alias("split"),
                          (a + F.pmod(-a, F.lit(interval).cast("long"))).alias("tick"))
             .agg(F.min("event_time").alias("min_event_time"), F.max("event_time").alias("max_event_time"))
             .limit(limit + 1).toArrow())
    return table if table.num_rows <= limit else None


@dataclass
class VariantLookup:
    """The timer firings' watermarks when the key is (variant, key): each firing searches its own variant's stream
    values (ascending), as fire_lookup.ValueLookup does for one replay."""
    values: dict[int, np.ndarray]
    keys: VariantKeys

    def looked_up(self, with_q: DataFrame) -> DataFrame:
        spark, q, variant = with_q.sparkSession, F.col("__q"), self.keys.variant()
        found = None
        for i, v in self.values.items():
            v = np.asarray(v, dtype=np.int64)
            v = v[np.searchsorted(v, NEG_INF, side="right"):]  # -inf is never >= a timer
            mine = ceiling_value(spark, v, q, required_for="the timer firings' lookups")
            found = F.when(variant == i, mine) if found is None else found.when(variant == i, mine)
        return with_q.withColumn("__v", found)


@dataclass
class KeyedReplay:
    """The variants' outputs, each row with its variant's number (VARIANT)."""
    windows: DataFrame
    late_events: DataFrame
    watermarks: dict[int, DataFrame]

    def result(self, i: int) -> EngineResult:
        """Variant i's outputs as engine.replay gives them."""
        mine = F.col(VARIANT) == i
        return EngineResult(windows=self.windows.where(mine).drop(VARIANT),
                            late_events=self.late_events.where(mine).drop(VARIANT),
                            watermarks=self.watermarks[i], watermarks_from_driver=True)

    def all_watermarks(self) -> DataFrame:
        """Every variant's watermarks output side by side, each row with its variant's number."""
        return reduce(DataFrame.unionByName, [_tagged(wm, i) for i, wm in self.watermarks.items()])


def side_by_side(results: dict[int, EngineResult]) -> KeyedReplay:
    """Variants replayed one by one (engine.replay), their outputs as the keyed pass gives them."""
    return KeyedReplay(windows=reduce(DataFrame.unionByName, [_tagged(r.windows, i) for i, r in results.items()]),
                       late_events=reduce(DataFrame.unionByName,
                                          [_tagged(r.late_events, i) for i, r in results.items()]),
                       watermarks={i: r.watermarks for i, r in results.items()})


def _tagged(df: DataFrame, i: int) -> DataFrame:
    return df.select(F.lit(i).alias(VARIANT), "*")


def keyed_replay(spark, rows: DataFrame, cfgs: Sequence[JobConfig], splits: Sequence[str], clock,
                 tick_partials: TickPartials | None = None) -> KeyedReplay | None:
    """Replay every config of `cfgs` (variant i = cfgs[i]) over `rows` in one keyed pass (module doc); None when
    the pass does not apply."""
    if not cfgs or not applies(spark, cfgs):
        return None
    engine.fixed_plans(spark)
    table = shared_tick_partials(rows, cfgs[0], tick_partials)
    if table is None:
        return None
    all_splits = sorted(set(splits))
    keys = VariantKeys.of(rows, len(cfgs))
    tagged: dict[int, list[DataFrame]] = {}
    values: dict[int, np.ndarray] = {}
    watermarks: dict[int, DataFrame] = {}
    stream_values = None  # unread: the timer firings look up VariantLookup
    for i, cfg in enumerate(cfgs):
        partials = TickPartials(cfg.watermark.interval_ms, table)
        timeline, _ = compute_timeline_carried(rows, cfg, all_splits, clock.start_ms, clock.end_ms, None, partials)
        if timeline.known_stream_values is None:
            return None  # computed in Spark (too many ticks for the driver): the variants one by one
        values[i], watermarks[i] = timeline.known_stream_values, timeline.watermarks
        stream_values = timeline.stream_values
        mine = windowed_only(timeline.rows)
        lateness = cfg.window.allowed_lateness_ms
        tagged.setdefault(lateness, []).append(mine.withColumn("key", keys.key(i)))
    windows, late = [], []
    for lateness, parts in tagged.items():
        first = next(c for c in cfgs if c.window.allowed_lateness_ms == lateness)
        # HAVING reads the row's own key: applied below, once the variant is out of the key.
        cfg = dataclasses.replace(first, having=None)
        union = reduce(DataFrame.unionByName, parts)
        firings, late_rows, _ = compute_windows_with_elements(
            union, stream_values, cfg,
            fire_lookup=VariantLookup(values, keys), partitions=windows_partitions(spark, cfg))
        windows.append(_unkeyed(firings, keys))
        late.append(_unkeyed(late_rows, keys))
    out = reduce(DataFrame.unionByName, windows)
    if cfgs[0].having is not None:  # the grid never varies it
        out = out.where(F.expr(cfgs[0].having))
    return KeyedReplay(windows=out, late_events=reduce(DataFrame.unionByName, late), watermarks=watermarks)


def _unkeyed(df: DataFrame, keys: VariantKeys) -> DataFrame:
    """The variant out of the key: VARIANT first, then the columns as engine.replay has them."""
    return df.select(keys.variant().alias(VARIANT),
                     *[keys.unkeyed().alias("key") if c == "key" else F.col(f"`{c}`") for c in df.columns])
