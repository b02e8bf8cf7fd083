"""Aggregates that combine: a late firing's value from its window's early rows and its late rows 1..j.

A late firing of a tumbling or sliding window holds the window's early rows and its late-accepted rows 1..j (fixed.py).
When an aggregate is one count/sum/min/max call, its value over both parts follows from each part's value: counts
add; sums add, and a sum over no non-null value is null, so null + s is s; min/max take the smaller/larger value,
which `least`/`greatest` do while skipping nulls. So the one big aggregate runs over the early rows only, the few late
rows get running aggregates of their own, and combining the two gives every late firing without copying early rows.

Not combinable here: DISTINCT (distinct counts do not add), FILTER clauses and anything beyond one call, and sum,
min or max over floating point (a sum rounds differently in two parts than in replay order; min/max would have to
order -0.0 against 0.0 and NaN as Flink's replay order does). Those configs take the numbered path (fixed.py).
"""
from __future__ import annotations

import re
from typing import Callable

from pyspark.errors import AnalysisException
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from ..elements import single_call

Combine = Callable[[Column, Column], Column]
_CALL = re.compile(r"^(count|sum|min|max)\s*\((.*)\)$", re.I | re.S)


def combiner(frame: DataFrame, expr: str) -> Combine | None:
    """How to combine two values of the aggregate `expr` over `frame`'s rows (None: it does not combine)."""
    text = expr.strip()
    call = _CALL.match(text)
    if call is None or not single_call(text):
        return None
    fn, inner = call.group(1).lower(), call.group(2).strip()
    if re.match(r"^distinct\b", inner, re.I) or re.match(r"^all\b", inner, re.I):
        return None
    try:
        out_type = frame.select(F.expr(text).alias("__x")).schema["__x"].dataType  # analysis only, no job
        arg_type = None if inner == "*" else frame.select(F.expr(inner).alias("__y")).schema["__y"].dataType
    except AnalysisException:
        return None
    if fn == "count":
        return lambda a, b: F.coalesce(a, F.lit(0)) + F.coalesce(b, F.lit(0))
    if isinstance(arg_type, (T.FloatType, T.DoubleType)):
        return None
    if fn == "sum":
        return lambda a, b: F.when(a.isNull(), b).when(b.isNull(), a).otherwise((a + b).cast(out_type))
    return F.least if fn == "min" else F.greatest


def combiners(frame: DataFrame, aggs: dict[str, str]) -> dict[str, Combine] | None:
    """A combiner per aggregate name, or None if any of them does not combine."""
    found = {name: combiner(frame, expr) for name, expr in aggs.items()}
    return None if any(c is None for c in found.values()) else found
