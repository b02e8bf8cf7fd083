"""Sorted tables of the driver looked up by a Spark column, without a join.

Some of the engine's answers come from small sorted tables the driver computed with numpy: the stream watermark
at each tick (timeline/driver.py) and the values the stream moved to (the timer firings, windows/fire_lookup.py).
Joining such a table to the rows by broadcast costs a Spark job of its own (Spark collects and builds the hash
table in a job, even for local data); instead the table becomes a Spark broadcast variable, which ships with the
tasks that read it and costs no job, and each row binary-searches it in a Java UDF (the engine's extension,
jvm/src/io/eventreplay/spark/SortedLookup.java): O(log n) per row, the rows keep their partitioning.

Two lookups: `floor_value` (the value at the largest key <= x, else a default) and `ceiling_value` (the smallest
value >= x, else null). Both return None when the extension is not on the driver's JVM; the caller then has its
own way (a broadcast join) or refuses.
"""
from __future__ import annotations

import numpy as np
from pyspark.sql import Column, SparkSession
from pyspark.sql.classic.column import Column as ClassicColumn

from ..extension import extension_class, required_class

_CLASS = "SortedLookup"


def available(spark: SparkSession) -> bool:
    """Whether the driver's JVM has the lookup (the extension's jar)."""
    return extension_class(spark, _CLASS) is not None


def floor_value(spark: SparkSession, keys: np.ndarray, values: np.ndarray, x: Column, default: int) -> Column | None:
    """A non-null long column: `values[i]` for the largest `keys[i] <= x` (the last of equal keys), else
    `default` (a null x too). `keys` ascending. None without the extension."""
    cls = extension_class(spark, _CLASS)
    if cls is None:
        return None
    return _column(cls.floor(spark._jsparkSession, _int64_bytes(keys), _int64_bytes(values), int(default), x._jc))


def ceiling_value(spark: SparkSession, sorted_values: np.ndarray, x: Column,
                  required_for: str | None = None) -> Column | None:
    """A long column: the smallest of `sorted_values` (ascending) that is >= x, null if none or x is null. None
    without the extension, or ExtensionMissing if `required_for` (what cannot do without it) is given."""
    cls = required_class(spark, _CLASS, required_for) if required_for else extension_class(spark, _CLASS)
    if cls is None:
        return None
    return _column(cls.ceiling(spark._jsparkSession, _int64_bytes(sorted_values), x._jc))


def _int64_bytes(a: np.ndarray) -> bytes:
    """Little-endian int64 bytes: py4j passes them to the JVM in one piece (a list goes element by element)."""
    return np.ascontiguousarray(a, dtype="<i8").tobytes()


def _column(jcol) -> Column:
    """A Python Column around a JVM one (pyspark's classic, non-Connect, Column)."""
    return ClassicColumn(jcol)
