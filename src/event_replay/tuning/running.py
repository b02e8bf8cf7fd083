"""A running sum over a series ordered by one long column, without a window over all rows, and lazily (the
what-if lag's p99 sums durations in lag order; lag_points.py takes the running maxima the same way, in one pass).

A Spark window needs a partition: one ordered window over the whole series moves every row into one task
(WindowExec's "No Partition Defined" warning) and that task grows with the log, since the tuning series have a
row per distinct arrival time, up to one per event. So the order column is cut into buckets of BUCKET consecutive
values: the window runs inside each bucket (at most BUCKET rows, as the order values of a series are distinct),
and what comes before a bucket (the sum of the earlier buckets) comes from one summary row per non-empty bucket,
carried across buckets by a window over the summary alone. That summary is small by construction: at most one
row per minute of the order column's span (1,440 rows per day of replay clock), whatever the number of rows.

Nothing here runs a Spark job: the result is a plan, computed by the caller's one action (a report gathers all its
figures in one job, spark_jobs.gather). The bucketed series is cached (lazily) because it is read twice, by the
summary and by the window; `release()` drops those caches once the figures are in.

Every function expects the order values of `df` to be distinct (the series are grouped by them) within each
group of the `by` columns: several series side by side (a what-if grid's variants), each summed on its own.
"""
from __future__ import annotations

from typing import Sequence

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

BUCKET = 60_000  # order values per bucket: one minute of a ms clock
_B, _EDGE = "_running_bucket", "_running_edge"
_cached: list[DataFrame] = []  # the bucketed series cached since the last release()


def _bucketed(df: DataFrame, order: str) -> DataFrame:
    b = df.withColumn(_B, F.floor(F.col(order) / F.lit(BUCKET))).cache()  # floor: negative values too
    _cached.append(b)
    return b


def release() -> None:
    """Drop the caches of the running aggregates built so far (call once their figures are collected)."""
    while _cached:
        _cached.pop().unpersist()


def _with_edge(df: DataFrame, order: str, agg: Column, edge: Column, by: Sequence[str], **more: Column) -> DataFrame:
    """`df` bucketed, with `_EDGE`: `edge` (a window function over the buckets' summaries, in bucket order, of
    their aggregate `v` = `agg`), and the columns `more`, other window functions of those summaries."""
    b = _bucketed(df, order)
    summary = b.groupBy(*by, _B).agg(agg.alias("v"))
    # One row per non-empty bucket: the window over all of them is small whatever the number of rows.
    edges = summary.select(*by, _B, edge.alias(_EDGE), *[c.alias(name) for name, c in more.items()])
    return b.join(edges, [*by, _B], "left")


def _before(agg_name: str, by: Sequence[str]) -> Column:
    """The aggregate of the summaries' `v` over the buckets before this one (null for the first)."""
    frame = Window.partitionBy(*by).orderBy(_B).rowsBetween(Window.unboundedPreceding, -1)
    return getattr(F, agg_name)("v").over(frame)


def _in_bucket(order: str, by: Sequence[str]) -> Window:
    return Window.partitionBy(*by, _B).orderBy(order)


def running_sum(df: DataFrame, order: str, value: str, out: str, total: str | None = None,
                by: Sequence[str] = ()) -> DataFrame:
    """`out` = the sum of `value` over the rows whose `order` is <= this row's (and whose `by` columns equal
    this row's); `total` (if named) the sum over all rows (of those `by`), on every row."""
    more = {total: F.sum("v").over(Window.partitionBy(*by))} if total else {}
    j = _with_edge(df, order, F.sum(value), _before("sum", by), by, **more)
    inner = F.sum(value).over(_in_bucket(order, by).rowsBetween(Window.unboundedPreceding, Window.currentRow))
    edge = F.col(_EDGE)  # null: nothing before the bucket; the inner sum is null while the bucket's values are
    return j.withColumn(out, F.coalesce(inner + edge, inner, edge)).drop(_B, _EDGE)
