"""The per-(split, tick) table of periodic emission, on the driver (SEMANTICS §2-4): what the timeline needs of
the rows.

With periodic emission a split publishes only at ticks (`publish_tick`), so the timeline needs from the rows only,
per (split, tick with rows), the largest event time published there, with every tick that has rows and the event
time range. `collect_tick_table` brings it to the driver in one Spark aggregate as Arrow columns, or sums the read's
partials (io/read_order.py) instead; above the driver's bound (`groups_limit`) it gives None and the caller takes
the Spark path. The timeline computed from it: driver.py.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from ...io.read_order import TickPartials, tick_partials_max
from .sorted_arrays import distinct_sorted

DRIVER_GROUPS_MAX: int | None = None  # (split, tick) entries on the driver; None: the read's bound. Tests set 0.


@dataclass
class TickTable:
    """The per-(split, tick) aggregate on the driver, sorted by (split index, tick)."""
    split: np.ndarray  # int32: index into the sorted main splits
    tick: np.ndarray  # int64
    max_event_time: np.ndarray  # int64
    row_ticks: np.ndarray  # every tick with rows (side inputs' too), ascending
    min_event_time: int | None  # over every row (window ends to look up); None without rows
    max_event_time_all: int | None


def publish_tick(arrival, first_tick: int, interval: int):
    """The tick a row is published at: the first tick at or after its arrival (a tick at the same instant comes
    after the row); rows before the first tick are published at the first tick."""
    return F.greatest(F.lit(first_tick).cast("long"), arrival + F.pmod(-arrival, F.lit(interval).cast("long")))


def groups_limit(spark: SparkSession) -> int:
    """The (split, tick) entries the driver takes at once: DRIVER_GROUPS_MAX when a test set it, else the read's
    bound."""
    return DRIVER_GROUPS_MAX if DRIVER_GROUPS_MAX is not None else tick_partials_max(spark)


def collect_tick_table(rows: DataFrame, main_splits: list[str], first_tick: int, interval: int,
                       limit: int | None = None, partials: TickPartials | None = None) -> TickTable | None:
    """One aggregate of the rows per (split, tick): None if it has more than `limit` (default: the driver's
    bound, DRIVER_GROUPS_MAX when a test set it) entries. `partials` of the same interval (the read's,
    io/read_order.py) are summed on the driver instead of aggregating the rows again (taken: see
    TickPartials.take)."""
    if limit is None:
        limit = groups_limit(rows.sparkSession)
    same = partials is not None and partials.interval == interval
    if same and partials.over_bound and limit <= tick_partials_max(rows.sparkSession):
        return None  # the read counted more entries than that: no aggregate of the rows to find it out again
    table = partials.take() if same else None
    if table is not None:
        return combine_partials(table, main_splits, first_tick, limit)
    # Every split's rows (side inputs too: their event times reach windows), side inputs dropped on the driver.
    agg = (rows.groupBy("split", publish_tick(F.col("arrival_time"), first_tick, interval).alias("tick"))
           .agg(F.max("event_time").alias("max_event_time"), F.min("event_time").alias("min_event_time")))
    table = agg.limit(limit + 1).toArrow()
    if table.num_rows > limit:
        return None
    return to_tick_table(table, main_splits)


def combine_partials(partials: pa.Table, main_splits: list[str], first_tick: int,
                     limit: int | None = None) -> TickTable | None:
    """The tick table from per-(split, tick) entries, several per group allowed (the read's partials): the entries
    of one (main split, tick) combined, ticks before `first_tick` published at it (as publish_tick); side inputs'
    entries count only for the row ticks and the event time range. One numpy sort of the entries (Arrow's group_by
    starts a thread pool whose arenas cost the driver ~40 MB); None above `limit` (split, tick) groups."""
    if partials.num_rows == 0:
        return to_tick_table(partials, main_splits)
    tick = np.maximum(partials.column("tick").to_numpy(), first_tick)
    row_ticks = distinct_sorted(tick)
    emax = partials.column("max_event_time").to_numpy()
    event_times = (pc.min(partials.column("min_event_time")).as_py(), int(emax.max()))
    index = _main_split_index(partials.column("split").combine_chunks(), main_splits)
    split = pc.drop_null(index).to_numpy().astype(np.int32, copy=False)
    if index.null_count:
        main = pc.is_valid(index).to_numpy(zero_copy_only=False)
        tick, emax = tick[main], emax[main]
    # Names rebound as they go, so that each copy frees the array before it (the driver's peak at 100M rows).
    order = np.lexsort((tick, split))
    split, tick, emax = split[order], tick[order], emax[order]
    del order
    starts = np.flatnonzero(np.r_[len(split) > 0, (split[1:] != split[:-1]) | (tick[1:] != tick[:-1])])
    if limit is not None and len(starts) > limit:
        return None
    group_max = np.maximum.reduceat(emax, starts) if len(starts) else emax
    return TickTable(split=split[starts], tick=tick[starts], max_event_time=group_max, row_ticks=row_ticks,
                     min_event_time=event_times[0], max_event_time_all=event_times[1])


def to_tick_table(table: pa.Table, main_splits: list[str]) -> TickTable:
    index = _main_split_index(table.column("split").combine_chunks(), main_splits)
    main = pc.is_valid(index).to_numpy(zero_copy_only=False)
    split = index.to_numpy(zero_copy_only=False)[main].astype(np.int32)
    tick_all = table.column("tick").to_numpy().astype(np.int64, copy=False)
    tick = tick_all[main]
    emax_all = table.column("max_event_time").to_numpy().astype(np.int64, copy=False)
    emin_all = table.column("min_event_time").to_numpy().astype(np.int64, copy=False)
    emax = emax_all[main]
    order = np.lexsort((tick, split))
    has_rows = table.num_rows > 0
    return TickTable(split=split[order], tick=tick[order], max_event_time=emax[order],
                     row_ticks=distinct_sorted(tick_all),
                     min_event_time=int(emin_all.min()) if has_rows else None,
                     max_event_time_all=int(emax_all.max()) if has_rows else None)


def _main_split_index(split: pa.Array, main_splits: list[str]) -> pa.Array:
    """Each entry's index in `main_splits` (null: a side input). A dictionary column is mapped through its
    dictionary, without decoding a string per entry."""
    names = pa.array(main_splits, pa.string())
    if pa.types.is_dictionary(split.type):
        return pc.index_in(split.dictionary, value_set=names).take(split.indices)
    return pc.index_in(split, value_set=names)
