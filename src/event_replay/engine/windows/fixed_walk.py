"""Tumbling and sliding windows' firings by a walk in the engine's Spark extension, when the aggregates do not
combine (fixed.py): one pass over each window's elements in replay order, the running aggregates kept as it goes.

The walk (jvm/src/io/eventreplay/spark/FixedWalk.java) evaluates count(*), count(c), and sum, min and max over int,
long and double columns exactly as Spark's running window aggregates do; any other aggregate, or no extension,
takes fixed.py's numbered path (Spark's Window operators), which gives the same firings. The elements are hashed
by key into `partitions` and sorted by (window start, key, window end, replay order), the windows output's order
(io/output.py): elements come nearly in time order, which that sort finds cheaper than a key-first one. The
firings stay in those partitions, in that order, so the windows write reuses them without a sort.
"""
from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import types as T

from ...extension import extension_class
from ...semantics.aggregates import aggregate_call
from ...semantics.model import FIRE_LATE_ROW
from ..elements import ORDER, PENDING, WE, WS

_ORDERED = (T.IntegerType, T.LongType, T.DoubleType)  # the types the walk sums and orders


def walk_aggregates(frame: DataFrame, aggs: dict[str, str]) -> list[tuple[str, str, str]] | None:
    """(name, function, column) per aggregate, the column as `frame` names it; None if any is beyond the walk."""
    fields = {f.name.lower(): f for f in frame.schema.fields}
    if len(fields) != len(frame.schema.fields):
        return None  # column names that differ only in case: leave their resolution to Spark
    out = []
    for name, expr in aggs.items():
        call = aggregate_call(expr)  # the reference model's calls: one function over one column
        if call is None or call[0] == "avg":
            return None
        fn, arg = call
        if arg == "*":
            if fn != "count":
                return None
            out.append((name, fn, "*"))
            continue
        field = fields.get(arg.lower())
        if field is None or (fn != "count" and not isinstance(field.dataType, _ORDERED)):
            return None
        out.append((name, fn, field.name))
    return out


def walked_firings(accepted: DataFrame, aggs: dict[str, str], partitions: int | None) -> DataFrame | None:
    """The firings of the accepted elements (fixed.py's numbered columns, timer firings PENDING), or None when
    the walk cannot take them (no extension, or an aggregate beyond it)."""
    spark = accepted.sparkSession
    walk = extension_class(spark, "FixedWalk")
    specs = walk_aggregates(accepted, aggs)
    if walk is None or specs is None:
        return None
    needed = dict.fromkeys(["key", WS, WE, *ORDER, "wm_before", *[c for _, _, c in specs if c != "*"]])
    elements = accepted.select(*needed)
    by_key = elements.repartition("key") if partitions is None else elements.repartition(partitions, "key")
    ordered = by_key.sortWithinPartitions(WS, "key", WE, *ORDER)
    ansi = spark.conf.get("spark.sql.ansi.enabled", "true").lower() == "true"
    names, functions, columns = (list(x) for x in zip(*specs))
    return DataFrame(walk.walk(ordered._jdf, names, functions, columns, ansi, PENDING, FIRE_LATE_ROW), spark)
