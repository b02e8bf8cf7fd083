"""Running aggregates over a series ordered by one long column, without a window over all rows.

A Spark window needs a partition: one ordered window over the whole series moves every row into one task
(WindowExec's "No Partition Defined" warning) and that task grows with the log, since the tuning series have a
row per distinct arrival time, up to one per event. So the order column is cut into buckets of BUCKET consecutive
values: the window runs inside each bucket (at most BUCKET rows, as the order values of a series are distinct),
and what comes before a bucket (the max or the sum of the earlier buckets, the first value of the next bucket)
comes from one summary row per non-empty bucket, collected. That summary is small by construction: at most one
row per minute of the order column's span (1,440 rows per day of replay clock), whatever the number of rows.

Every function expects the order values of `df` to be distinct (the series are grouped by them).
"""
from __future__ import annotations

from typing import Callable

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..spark import local_frame

BUCKET = 60_000  # order values per bucket: one minute of a ms clock
_B, _EDGE = "_running_bucket", "_running_edge"


def _bucketed(df: DataFrame, order: str) -> DataFrame:
    return df.withColumn(_B, F.floor(F.col(order) / F.lit(BUCKET)))  # floor: negative values too


def _edges(b: DataFrame, agg: Column, edge: Callable[[list], list]) -> DataFrame:
    """(bucket, edge value) from the buckets' summaries, `edge` mapping them (ordered by bucket) to one value each."""
    summary = b.groupBy(_B).agg(agg.alias("v"))
    rows = sorted(summary.collect(), key=lambda r: r[_B])  # one row per non-empty bucket: small (sorted here)
    dtype = summary.schema["v"].dataType
    schema = T.StructType([T.StructField(_B, T.LongType()), T.StructField(_EDGE, dtype)])
    data = list(zip([int(r[_B]) for r in rows], edge([r["v"] for r in rows])))
    return F.broadcast(local_frame(b.sparkSession, data, schema))


def _exclusive(values: list, combine: Callable) -> list:
    """For each position, `combine` of the values before it (None for the first and while all are None)."""
    out, acc = [], None
    for v in values:
        out.append(acc)
        acc = v if acc is None else (acc if v is None else combine(acc, v))
    return out


def _with_edge(df: DataFrame, order: str, agg: Column, edge: Callable[[list], list]) -> DataFrame:
    # Materialised once: the summary and the window read it, and a running aggregate of a running aggregate does
    # not compute the first one again (each would be a Spark job per shuffle of the whole lineage).
    b = _bucketed(df, order).localCheckpoint(eager=True)
    return b.join(_edges(b, agg, edge), _B, "left")


def _in_bucket(order: str) -> Window:
    return Window.partitionBy(_B).orderBy(order)


def running_max(df: DataFrame, order: str, value: str, out: str) -> DataFrame:
    """`out` = the max of `value` over the rows whose `order` is <= this row's (nulls ignored, as max does)."""
    j = _with_edge(df, order, F.max(value), lambda vs: _exclusive(vs, max))
    inner = F.max(value).over(_in_bucket(order).rowsBetween(Window.unboundedPreceding, Window.currentRow))
    return j.withColumn(out, F.greatest(inner, F.col(_EDGE))).drop(_B, _EDGE)  # greatest skips nulls


def running_sum(df: DataFrame, order: str, value: str, out: str) -> DataFrame:
    """`out` = the sum of `value` over the rows whose `order` is <= this row's."""
    j = _with_edge(df, order, F.sum(value), lambda vs: _exclusive(vs, lambda a, v: a + v))
    inner = F.sum(value).over(_in_bucket(order).rowsBetween(Window.unboundedPreceding, Window.currentRow))
    edge = F.col(_EDGE)  # null: nothing before the bucket; the inner sum is null while the bucket's values are
    return j.withColumn(out, F.coalesce(inner + edge, inner, edge)).drop(_B, _EDGE)


def next_value(df: DataFrame, order: str, out: str) -> DataFrame:
    """`out` = the next `order` value of the series (null for the last row)."""
    j = _with_edge(df, order, F.min(order), lambda firsts: firsts[1:] + [None])
    return j.withColumn(out, F.coalesce(F.lead(order).over(_in_bucket(order)), F.col(_EDGE))).drop(_B, _EDGE)
