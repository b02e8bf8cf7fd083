"""Window elements, shared by the tumbling/sliding and the session paths (SEMANTICS §5–6).

An element is one (window, row it holds): the window id, `__pos` (1-based, in the order whose prefixes the
firings hold), key, window bounds, the input columns, and on the element at which a firing happens (its last one)
fire_index / fire_reason / fire_watermark (null elsewhere). Every firing holds a prefix of its window's elements,
so its aggregates are running aggregates read at the firing element.
"""
from __future__ import annotations

import re

from pyspark.errors import AnalysisException
from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from .contract import POS_INF

ORDER = ("arrival_time", "split", "offset")  # replay order: every sort includes it, so no physical order leaks in
WS, WE, POS = "__ws", "__we", "__pos"
PENDING = "__pending"  # a timer firing whose watermark is still to be looked up


def cleanup(max_ts: Column, lateness: int) -> Column:
    """max_ts + lateness, saturating at +inf like Flink (ANSI arithmetic would raise instead)."""
    if lateness == 0:
        return max_ts
    return F.when(max_ts > F.lit(POS_INF - lateness), F.lit(POS_INF)).otherwise(max_ts + F.lit(lateness))




def _runs_as_window_function(frame: DataFrame, expr: str, spec) -> bool:
    """Whether `expr` is one aggregate call Spark accepts over a window. A syntactic check first (one call
    spanning the whole text, no DISTINCT/FILTER), so that the common rejections do not go through a failed
    analysis (which Spark logs at length); then the analysis decides (no job runs)."""
    text = expr.strip()
    if not re.match(r"^[A-Za-z_][A-Za-z0-9_.]*\s*\(", text) or re.search(r"\b(distinct|filter)\b", text, re.I):
        return False
    if not single_call(text):
        return False
    try:
        frame.select(F.expr(text).over(spec)).schema
        return True
    except AnalysisException:
        return False


def firings_with_aggregates(elems: DataFrame, wid: list[str], order: list[str], aggs: dict[str, str]) -> DataFrame:
    """The firing elements, each with every aggregate over its window's elements up to it.

    An aggregate that Spark can run as a window function (one aggregate call: sum(x), count(*), avg(x),
    approx_count_distinct(x), ...) is a running aggregate over the window's elements in order, read at the firing
    element: one sort per window, O(n log n), sharing the sort that numbered the elements. Anything else
    (sum(x) / count(*), count(DISTINCT x), FILTER clauses) goes through a join of each firing to its window's
    elements up to it and a groupBy: exact, but it costs the sum over firings of their window sizes, which is
    O(n) when windows fire about once and grows with the number of late firings of large windows.
    """
    running = Window.partitionBy(*wid).orderBy(*order).rowsBetween(Window.unboundedPreceding, Window.currentRow)
    windowable, general = {}, {}
    for name, expr in aggs.items():
        (windowable if _runs_as_window_function(elems, expr, running) else general)[name] = expr
    # arrival_time: the firing element's row, which tells a partition replay whether the firing is its own.
    keep = list(dict.fromkeys([*wid, "key", WS, WE, POS, "fire_index", "fire_reason", "fire_watermark",
                               "arrival_time"]))
    fired = (elems.select(*keep, *[F.expr(e).over(running).alias(n) for n, e in windowable.items()])
             .where(F.col("fire_reason").isNotNull()))
    if general:
        f = {c: f"__f_{c}" for c in [*wid, POS]}
        ids = fired.select(*[F.col(c).alias(f[c]) for c in f])
        held = [F.col(c).eqNullSafe(F.col(f[c])) for c in wid] + [F.col(POS) <= F.col(f[POS])]
        grouped = (elems.join(ids, held).groupBy(*f.values())
                   .agg(*[F.expr(e).alias(n) for n, e in general.items()]))
        fired = (fired.join(grouped, [F.col(c).eqNullSafe(F.col(f[c])) for c in f], "left").drop(*f.values()))
    return fired


def single_call(text: str) -> bool:
    """Whether the parenthesis opened by the first call in `text` closes at its very end: one call, nothing after."""
    depth = 0
    for i, ch in enumerate(text):
        depth += (ch == "(") - (ch == ")")
        if depth == 0 and ch == ")":
            return i == len(text) - 1
    return False
