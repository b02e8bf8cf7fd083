"""Duplicate and out-of-order offsets (docs/semantics.md, "Quarantine"): two filters find the splits that can hold
such a row (the read-order pass of io/read_order.py, then a sort of the splits it cannot prove clean), and the
exact checks decide those splits row by row."""
from __future__ import annotations

from typing import Mapping

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from .read_order import proven_clean, read_order_records
from .quarantine import (DUPLICATE_OFFSET, DUPLICATE_ROW, OFFSET_OUT_OF_ORDER, PARSED, REASON, STATUS, STATUS_CODE,
                         STATUS_CODES, orderable_columns, row_content)

def _carried_offset(s: Column, carried: Mapping[str, int] | None) -> Column:
    """The last offset of the row's split in the partitions before this one (null: none, or a whole range)."""
    if not carried:
        return F.lit(None).cast("long")
    pairs = [x for name, off in sorted(carried.items()) for x in (F.lit(name), F.lit(int(off)).cast("long"))]
    return F.try_element_at(F.create_map(*pairs), s)


def _exact_offset_checks(parsed: DataFrame, raw: DataFrame, s: Column, o: Column, a: Column,
                         carried: Mapping[str, int] | None = None) -> DataFrame:
    """Duplicates and out-of-order offsets, decided row by row (docs/semantics.md, "Quarantine").

    Offsets rise strictly in a split (SEMANTICS §1; Flink reads a split in offset order). In the order (arrival,
    offset, then the row's content, so that nothing depends on files) each row is compared with the largest offset
    before it in its split, `M` (with the split's last offset carried from the partitions before, if any):
    above M it is clean; equal to M it is a second row at that offset: `duplicate_row` when it is an exact copy of
    the first row at that offset in the range (a redelivery), `duplicate_offset` otherwise (an exact copy always
    has the same arrival time, so one whose first copy is in an earlier partition cannot occur); below M it is
    `offset_out_of_order`. Only M is needed, so a partitioned replay carrying each split's last offset quarantines
    the same rows for the same reasons as one replay of the range."""
    order = [a, o, F.col(f"{PARSED}event_time")] + [F.col(f"`{c}`") for c in orderable_columns(raw)]
    before = Window.partitionBy(F.col(STATUS), s).orderBy(*order).rowsBetween(Window.unboundedPreceding, -1)
    at_offset = Window.partitionBy(F.col(STATUS), s, o).orderBy(*order)
    cand = F.col(STATUS) == "candidate"
    m = F.greatest(F.max(o).over(before), _carried_offset(s, carried))  # greatest skips nulls
    content = row_content(raw)
    copy = (F.row_number().over(at_offset) > 1) & F.first(content).over(at_offset).eqNullSafe(content)
    reason = (F.when(cand & (o == m) & copy, F.lit(DUPLICATE_ROW)).when(cand & (o == m), F.lit(DUPLICATE_OFFSET))
              .when(cand & (o < m), F.lit(OFFSET_OUT_OF_ORDER)))
    parsed = parsed.withColumn("__offset_reason", reason)
    return (parsed.withColumn(REASON, F.coalesce(F.col("__offset_reason"), F.col(REASON)))
            .withColumn(STATUS, F.when(F.col("__offset_reason").isNotNull(), F.lit("quarantined"))
                        .when(cand, F.lit("clean")).otherwise(F.col(STATUS)))
            .drop("__offset_reason"))


def _count(stats: dict[str, dict], status: str, group, names) -> None:
    """Adds one record (n, lo, hi, f: its folder) to the per-status stats."""
    d = stats.setdefault(status, {"n": 0, "lo": None, "hi": None, "splits": set(), "by_folder": {}})
    d["n"] += group["n"]
    d["by_folder"][group["f"]] = d["by_folder"].get(group["f"], 0) + group["n"]
    d["lo"] = min((v for v in (d["lo"], group["lo"]) if v is not None), default=None)
    d["hi"] = max((v for v in (d["hi"], group["hi"]) if v is not None), default=None)
    d["splits"].update(names)


_PRECHECK = True  # False: every split goes through the exact checks (tests prove the pre-checks change nothing)
_split_hash = F.xxhash64  # the sorted check's key for a split (tests force collisions through it)
# The read-order records' status codes by name; a candidate that passes is clean.
_STATUS_OF = {code: "clean" if name == "candidate" else name for name, code in STATUS_CODES.items()}


def _stats(records: list[dict]) -> tuple[dict[str, dict], dict[str, int]]:
    """Per status: n, lo/hi (arrival range), splits, by_folder; and each candidate split's largest offset, which is
    its largest clean one (the first row at that offset is above every offset before it; a carried offset at or
    above it is kept anyway: last_offsets_after)."""
    stats: dict[str, dict] = {}
    max_offsets: dict[str, int] = {}
    for r in records:
        names = [r["s"]] if r["c"] == 0 else []
        _count(stats, _STATUS_OF[r["c"]], r, names)
        if r["c"] == 0 and r["max_o"] is not None:
            max_offsets[r["s"]] = max(r["max_o"], max_offsets.get(r["s"], r["max_o"]))
    return stats, max_offsets


def _sorted_check(parsed: DataFrame, s: Column, o: Column, a: Column, carried: Mapping[str, int] | None,
                  splits: set[str]) -> set[str]:
    """Of `splits`, those that may hold a bad row: in (arrival, offset) order, an offset not above every offset
    before it (or not above the carried one). One sort of four narrow columns; it finds every bad row's split: a
    second row at (split, offset) either arrives at the same instant as the first (the pair is adjacent: equal
    offsets) or later (an offset not above an earlier one); an out-of-order offset is not above one that arrived
    before it."""
    # Sorted by a 64-bit hash of the split, not its string (comparing the strings was most of the sort's cost).
    # Two splits with one hash share a running max: such a group is returned whole, so a collision costs time,
    # never exactness.
    cand = (F.col(STATUS) == "candidate") & s.isin(sorted(splits))
    narrow = parsed.filter(cand).select(_split_hash(s).alias("h"), s.alias("s"), o.alias("o"), a.alias("a"),
                                        _carried_offset(s, carried).alias("carried"))
    before = Window.partitionBy("h").orderBy("a", "o").rowsBetween(Window.unboundedPreceding, -1)
    not_above = (F.col("o") <= F.max("o").over(before)) | (F.col("o") <= F.col("carried"))
    per_hash = (narrow.withColumn("_bad", F.coalesce(not_above, F.lit(False)))
                .groupBy("h").agg(F.max(F.col("_bad").cast("int")).alias("bad"), F.collect_set("s").alias("names"))
                .collect())
    return {name for r in per_hash if r["bad"] or len(r["names"]) > 1 for name in r["names"]}


def check_offsets(parsed: DataFrame, raw: DataFrame, s: Column, o: Column, a: Column,
                  carried: Mapping[str, int] | None = None, folder: Column | None = None,
                  event_time: Column | None = None,
                  interval: int = 0,
                  rows_at_most: int | None = None) -> tuple[DataFrame, list[DataFrame], dict[str, dict]]:
    """The candidates become clean, or quarantined as duplicates or out-of-order offsets (_exact_offset_checks);
    returns the checked rows, the frames cached for them, and per status: n, lo/hi (arrival range), splits; the
    clean status also has `max_offsets` (split -> largest offset of its clean rows), which the carried state needs.

    The exact checks sort whole rows twice; they run only on the splits that can hold such a row. Two filters
    find those splits: the read-order pass (io/read_order.py: no sort, proves most splits of a log written in
    arrival order clean, and counts every status) and, for the splits it cannot prove, the sorted check
    (_sorted_check). Since both exact windows partition by split, whole splits go through them unchanged.
    `carried`: each split's last offset in the partitions before (a row not above it is bad too). `folder`: for a
    span of partition folders, each status also has `by_folder` (folder -> rows). `interval` (periodic watermarks,
    with `event_time`): the clean status also has `tick_partials` (read_order.TickPartials) when every candidate
    is clean, else None. `rows_at_most`: a bound on the rows read, if known (read_order_records)."""
    cand = F.col(STATUS) == "candidate"
    code = F.col(STATUS_CODE)  # the same statuses as numbers: the pass over every row compares no strings
    folder = folder if folder is not None else F.lit(0).cast("long")
    read = read_order_records(code, s, folder, o, a, parsed, event_time, interval, rows_at_most)
    records = read.records
    stats, max_offsets = _stats(records)
    splits = {r["s"] for r in records if r["c"] == 0}
    if not _PRECHECK:
        dirty = splits
    else:
        unproven = splits - proven_clean(records, carried)
        dirty = _sorted_check(parsed, s, o, a, carried, unproven) if unproven else set()
    if "clean" in stats:
        stats["clean"]["max_offsets"] = max_offsets
        stats["clean"]["tick_partials"] = None if dirty else read.ticks
    if not dirty:
        return parsed.withColumn(STATUS, F.when(cand, F.lit("clean")).otherwise(F.col(STATUS))), [], stats
    exact = cand & s.isin(sorted(dirty))
    # The dirty splits' rows are kept once checked (their windows are not re-run by every later read).
    checked = _exact_offset_checks(parsed.filter(exact), raw, s, o, a, carried).persist(StorageLevel.MEMORY_AND_DISK)
    rest = parsed.filter(~exact).withColumn(STATUS, F.when(cand, F.lit("clean")).otherwise(F.col(STATUS)))
    out = rest.unionByName(checked)
    # Counted again after the exact checks (only the clean rows' split names are brought back).
    rows = (out.groupBy(STATUS, folder.alias("f"))
            .agg(F.count(F.lit(1)).alias("n"), F.min(a).alias("lo"), F.max(a).alias("hi"),
                 F.collect_set(F.when(F.col(STATUS) == "clean", s)).alias("splits"))
            .collect())
    stats = {}
    for r in rows:
        _count(stats, r[STATUS], r, r["splits"])
    if "clean" in stats:
        stats["clean"]["max_offsets"] = max_offsets
    return out, [checked], stats
