"""Which splits are clean of duplicate and out-of-order offsets, proven from the order the rows were read in.

The offset check (io/offsets.py) wants every split's rows in (arrival, offset) order, each offset above all
before it. Sorting every row for that was most of a replay's read cost. But logs are mostly written the way they
arrived: one pass over each Spark partition in read order (the engine's Spark extension,
jvm/src/io/eventreplay/spark/OffsetRuns.java) cuts each split's rows of each file into runs whose arrival times
never fall and whose offsets strictly rise, and reports per run its count, arrival range and offset range (a
handful per split and file on such a log). On the driver, a split is proven clean when its runs, ordered by first
arrival then first offset, each end before the next begins in both arrival and offset, and the first offset is
above the offset carried from the partitions before: the split in (arrival, offset) order is then its runs one
after the other. Any other split (runs that interleave, or more than MAX_RUNS of them in a partition: a shuffled
file) is left to the sorted check, which decides it exactly; so the order of the files can change the work done,
never a result.

The same records give the counts every status needs (rows, arrival range, per folder) and each split's largest
offset; with periodic watermarks also the timeline's per-(split, tick) event times of the candidate rows
(`TickPartials`, TickTimes.java), so that the engine's timeline needs no scan of its own when every candidate
turns out clean. Without the extension (no JDK at install, or a spark-submit without --jars) the records are one
plain aggregate per (status, split, folder), none proven: every split takes the sorted check and the timeline
its own aggregate; same results, slower.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Mapping

import pyarrow as pa
import pyarrow.compute as pc
from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from ..extension import extension_class, missing_reason
from .tick_buckets import TickBuckets, write_tick_buckets

MAX_RUNS = 64  # runs of one split in one partition before the rest of its rows there only count
# The most (split, tick) entries the driver takes (here and in engine/timeline/driver.py): about 100 bytes each at
# the Python driver's peak and 30 in the JVM's while they pass (docs/memory.md); a longer or denser log's timeline
# runs in Spark instead. A local master scales the bound with the driver's heap (the Python driver shares the
# machine it sized, local_driver_memory); elsewhere the Python driver's memory is not ours to size.
TICK_PARTIALS_MAX = 4_000_000
TICK_PARTIALS_PER_HEAP_GB = 4_000_000
TICK_PARTIALS_LOCAL_MAX = 16_000_000
_RUN_COLUMNS = ("c", "s", "f", "n", "lo", "hi", "min_o", "max_o", "ordered")
_log = logging.getLogger(__name__)


def tick_partials_max(spark) -> int:
    """The driver's bound on (split, tick) entries for this session (see TICK_PARTIALS_MAX)."""
    sc = spark.sparkContext
    if not sc.master.startswith("local"):
        return TICK_PARTIALS_MAX
    heap_gb = int(sc._jvm.java.lang.Runtime.getRuntime().maxMemory()) / (1 << 30)
    return int(min(TICK_PARTIALS_LOCAL_MAX, max(TICK_PARTIALS_MAX, heap_gb * TICK_PARTIALS_PER_HEAP_GB)))


def _runs_class(spark):
    cls = extension_class(spark, "OffsetRuns")
    if cls is None:
        _log.warning("%s: every split is sorted to check its offsets (same results, slower)", missing_reason())
    return cls


class TickPartials:
    """Per (split, tick of `interval` at or after the arrival) of the clean rows: a table of split (dictionary),
    tick, min_event_time, max_event_time, one entry per partition that had such rows (engine/timeline/driver.py
    combines them and clamps ticks before the range's first). At 100M rows that is ~40 MB of the driver's memory,
    so the timeline takes it once (`take`), and it is freed as soon as the tick table is built."""

    def __init__(self, interval: int, table: pa.Table | None, buckets: TickBuckets | None = None):
        """`table` None: the read counted more entries than the driver's bound and did not collect them; it wrote
        them to the scratch folder in `buckets` instead, if it had one."""
        if interval <= 0:
            raise ValueError(f"interval must be positive, got {interval}")
        if table is not None and buckets is not None:
            raise ValueError("the entries are either collected or written, not both")
        self.interval = interval
        self.over_bound = table is None
        self.buckets = buckets
        self._table: pa.Table | None = table

    def take(self) -> pa.Table | None:
        """The table, handed over once: later calls get None (the timeline then aggregates the rows itself)."""
        table, self._table = self._table, None
        return table


@dataclass(frozen=True)
class ReadOrder:
    records: list[dict]  # c, s, f, n, lo, hi (arrival), min_o, max_o, ordered (False: a sum, not a run)
    ticks: TickPartials | None  # None: not asked for, or no extension


def read_order_records(code: Column, split: Column, folder: Column, offset: Column, arrival: Column,
                       rows: DataFrame, event_time: Column | None = None, interval: int = 0,
                       rows_at_most: int | None = None) -> ReadOrder:
    """Per run (status code c = 0) or per (c, folder) otherwise; with `interval` (and `event_time`), the tick
    partials of the candidate rows too. `rows_at_most`: a bound on the rows read, if known (the Parquet footers)."""
    narrow = rows.select(code.alias("c"), F.when(code == 0, split).alias("s"), folder.alias("f"),
                         offset.alias("o"), arrival.alias("a"), F.xxhash64(F.input_file_name()).alias("file"),
                         (event_time if interval else F.lit(None)).cast("long").alias("e"))
    spark = rows.sparkSession
    cls = _runs_class(spark)
    if cls is None:
        return ReadOrder(records=_summed(narrow).to_pylist(), ticks=None)
    passed = DataFrame(cls.runs(narrow._jdf, MAX_RUNS, interval), spark)
    if not interval:
        return ReadOrder(records=passed.drop("ticks", "min_e", "max_e").toArrow().to_pylist(), ticks=None)
    if rows_at_most is not None and rows_at_most <= tick_partials_max(spark):
        # Every tick entry has a row of its own, so the entries fit the driver's bound: runs and tick records
        # come back in one job (a small partition pays a job's round trip more than anything else).
        return _collected_once(passed, interval)
    # The pass once, kept (spilling if need be), then read twice: the runs with each tick record's size, and the
    # tick records: collected if they fit the driver's bound (tick_partials_max), else written to the scratch
    # folder in buckets of ticks, which the timeline takes a chunk at a time.
    passed = passed.persist(StorageLevel.MEMORY_AND_DISK)
    try:
        table = passed.select(*_RUN_COLUMNS, F.col("ticks").isNotNull().alias("is_tick"),
                              F.size("ticks").alias("n_ticks")).toArrow()
        is_tick = table.column("is_tick")
        runs = table.drop_columns(["is_tick", "n_ticks"]).filter(pc.invert(is_tick))
        entries = pc.sum(table.column("n_ticks").filter(is_tick)).as_py() or 0
        records = passed.where(F.col("ticks").isNotNull()).select("s", "ticks", "min_e", "max_e")
        if entries <= tick_partials_max(spark):
            ticks = TickPartials(interval, _tick_partials(records.toArrow()))
        else:
            ticks = TickPartials(interval, None, _written(records, runs, interval))
    finally:
        passed.unpersist()
    return ReadOrder(records=runs.to_pylist(), ticks=ticks)


def _collected_once(passed: DataFrame, interval: int) -> ReadOrder:
    """The pass's runs and tick records from one collect (the caller bounded the entries)."""
    table = passed.toArrow()
    is_tick = pc.is_valid(table.column("ticks"))
    runs = table.select(list(_RUN_COLUMNS)).filter(pc.invert(is_tick))
    ticks = table.filter(is_tick).select(["s", "ticks", "min_e", "max_e"])
    return ReadOrder(records=runs.to_pylist(), ticks=TickPartials(interval, _tick_partials(ticks)))


def _tick_partials(records: pa.Table) -> pa.Table:
    """The tick records (one per split of a partition, arrays of one length) as one entry per tick, the split
    dictionary-encoded: at 100M rows that is ~1.6M entries, so no string is repeated per entry."""
    split = records.column("s").combine_chunks()
    splits = pc.unique(split)
    ticks = records.column("ticks").combine_chunks()
    entry_record = pc.list_parent_indices(ticks)
    flat = lambda name: pc.list_flatten(records.column(name).combine_chunks())  # noqa: E731
    return pa.table({
        "split": pa.DictionaryArray.from_arrays(pc.index_in(split, value_set=splits).take(entry_record), splits),
        "tick": pc.list_flatten(ticks), "min_event_time": flat("min_e"), "max_event_time": flat("max_e")})


def _written(records: DataFrame, runs: pa.Table, interval: int) -> TickBuckets | None:
    """The tick records, one entry per tick, bucketed over the candidates' ticks (from the runs' arrival range)."""
    candidates = runs.filter(pc.equal(runs.column("c"), 0))
    if candidates.num_rows == 0 or pc.min(candidates.column("lo")).as_py() is None:
        return None
    first, last = (_tick_of(pc.min(candidates.column("lo")).as_py(), interval),
                   _tick_of(pc.max(candidates.column("hi")).as_py(), interval))
    entries = records.select(F.col("s").alias("split"), F.inline(F.arrays_zip(
        F.col("ticks").alias("tick"), F.col("min_e").alias("min_event_time"),
        F.col("max_e").alias("max_event_time"))))
    return write_tick_buckets(entries, first, last, interval, one_file_per_bucket=False)


def _tick_of(arrival: int, interval: int) -> int:
    return -(-arrival // interval) * interval


def _summed(narrow: DataFrame) -> pa.Table:
    """Without the extension: one record per (status, split, folder), none a run."""
    return (narrow.groupBy("c", "s", "f")
            .agg(F.count(F.lit(1)).alias("n"), F.min("a").alias("lo"), F.max("a").alias("hi"),
                 F.min("o").alias("min_o"), F.max("o").alias("max_o"), F.lit(False).alias("ordered"))
            .toArrow())


def proven_clean(records: list[dict], carried: Mapping[str, int] | None) -> set[str]:
    """The candidate splits whose runs (read_order_records, as dicts) chain (module doc): every row of them is
    clean."""
    by_split: dict[str, list[dict]] = {}
    for r in records:
        if r["c"] == 0:
            by_split.setdefault(r["s"], []).append(r)
    return {s for s, runs in by_split.items() if _chains(runs, (carried or {}).get(s))}


def _chains(runs: list[dict], carried: int | None) -> bool:
    if any(not r["ordered"] or r["min_o"] is None or r["lo"] is None for r in runs):
        return False
    runs = sorted(runs, key=lambda r: (r["lo"], r["min_o"]))
    if carried is not None and runs[0]["min_o"] <= carried:
        return False
    return all(a["hi"] <= b["lo"] and a["max_o"] < b["min_o"] for a, b in zip(runs, runs[1:]))
