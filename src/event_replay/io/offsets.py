"""Duplicate and out-of-order offsets (docs/semantics.md, "Quarantine"): a narrow pre-check finds the splits that
can hold such a row, and the exact checks decide those splits row by row."""
from __future__ import annotations

from typing import Mapping

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from .quarantine import (DUPLICATE_OFFSET, DUPLICATE_ROW, OFFSET_OUT_OF_ORDER, PARSED, REASON, STATUS,
                         orderable_columns, row_content)

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
    """Adds one aggregated group (n, lo, hi, f: its folder) to the per-status stats."""
    d = stats.setdefault(status, {"n": 0, "lo": None, "hi": None, "splits": set(), "by_folder": {}})
    d["n"] += group["n"]
    d["by_folder"][group["f"]] = d["by_folder"].get(group["f"], 0) + group["n"]
    d["lo"] = min((v for v in (d["lo"], group["lo"]) if v is not None), default=None)
    d["hi"] = max((v for v in (d["hi"], group["hi"]) if v is not None), default=None)
    d["splits"].update(names)


_PRECHECK = True  # False: every split goes through the exact checks (tests prove the pre-check changes nothing)
_split_hash = F.xxhash64  # the pre-check's key for a split (tests force collisions through it)


def check_offsets(parsed: DataFrame, raw: DataFrame, s: Column, o: Column, a: Column,
                  carried: Mapping[str, int] | None = None,
                  folder: Column | None = None) -> tuple[DataFrame, list[DataFrame], dict[str, dict]]:
    """The candidates become clean, or quarantined as duplicates or out-of-order offsets (_exact_offset_checks);
    returns the checked rows, the frames cached for them, and per status: n, lo/hi (arrival range), splits; the
    clean status also has `max_offsets` (split -> largest offset of its clean rows; None when a hash collision
    hides it), which the carried state needs.

    The exact checks sort whole rows twice; they run only on the splits that can hold such a row. A split is
    clean when, in (arrival, offset) order, every offset is above all the offsets before it: one sort of four
    narrow columns, in the same pass as the counts. That finds every bad row's split: a second row at
    (split, offset) either arrives at the same instant as the first (the pair is adjacent: equal offsets) or
    later (an offset not above an earlier one); an out-of-order offset is not above one that arrived before it.
    Since both exact windows partition by split, whole splits go through them unchanged. `carried`: each split's
    last offset in the partitions before (a row not above it is bad too). `folder`: for a span of partition folders,
    each status also has `by_folder` (folder -> rows), counted in the same aggregates."""
    cand = F.col(STATUS) == "candidate"
    # Sorted by longs only (a status code, a 64-bit hash of the split): comparing the split strings was most of the
    # sort's cost. Two splits with one hash would share a running max: such a hash group is sent to the exact
    # checks whole (it holds more than one split name), so a collision costs time, never exactness.
    code = F.when(cand, 0).when(F.col(STATUS) == "skipped", 1).otherwise(2)
    folder = folder if folder is not None else F.lit(0).cast("long")
    narrow = parsed.select(code.alias("c"), F.when(cand, _split_hash(s)).alias("h"), s.alias("s"), o.alias("o"),
                           a.alias("a"), _carried_offset(s, carried).alias("carried"), folder.alias("f"))
    before = Window.partitionBy("c", "h").orderBy("a", "o").rowsBetween(Window.unboundedPreceding, -1)
    # Grouped by split for the candidates only (their split names are the log's splits: few); the other rows
    # by status alone, whatever they hold in their split column.
    not_above = (F.col("o") <= F.max("o").over(before)) | (F.col("o") <= F.col("carried"))
    per_hash = (narrow.withColumn("_bad", (F.col("c") == 0) & F.coalesce(not_above, F.lit(False)))
                .groupBy("c", "h", "f")
                .agg(F.count(F.lit(1)).alias("n"), F.min("a").alias("lo"), F.max("a").alias("hi"),
                     F.max(F.col("_bad").cast("int")).alias("bad"), F.max("o").alias("max_o"),
                     F.collect_set(F.when(F.col("c") == 0, F.col("s"))).alias("names"))
                .collect())
    # Per status (a candidate that passes is clean): counts, arrival range, split names; and the splits to check.
    status_of = {0: "clean", 1: "skipped", 2: "quarantined"}
    stats: dict[str, dict] = {}
    dirty: set[str] = set()
    # A split's largest candidate offset is its largest clean one: the first row at that offset is above every
    # offset before it (and a carried offset at or above it is kept anyway: last_offsets_after).
    max_offsets: dict[str, int] | None = {}
    for r in per_hash:
        st = status_of[r["c"]]
        if st == "clean" and max_offsets is not None:
            if len(r["names"]) == 1:
                name = r["names"][0]
                max_offsets[name] = max(int(r["max_o"]), max_offsets.get(name, int(r["max_o"])))
            else:
                max_offsets = None
        # A group of two splits (a hash collision) shared one running max: its splits are checked exactly.
        if st == "clean" and (r["bad"] or len(r["names"]) > 1 or not _PRECHECK):
            dirty.update(r["names"])
        _count(stats, st, r, r["names"])
    if "clean" in stats:
        stats["clean"]["max_offsets"] = max_offsets
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
